//! Tests of the translation of display events.
