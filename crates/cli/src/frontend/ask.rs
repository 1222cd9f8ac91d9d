//! One question at the terminal, read with reedline: the short prompts asked in between
//! (approval answers, notes, form fields, edited arguments), which may start pre-filled; also
//! the text prompt and the signal mapping the chat's own line editor (`chat/lines.rs`) is built
//! on. Reedline paints on stdout, so it is used only when stdin and stdout are both terminals
//! ([`line_editor_usable`]). Prompts may name a worker or a tool's field, so they are cleaned
//! (`frontend::clean`).

use std::borrow::Cow;
use std::io::IsTerminal;

use reedline::{EditCommand, Prompt, PromptEditMode, PromptHistorySearch, Reedline, Signal};

use super::clean::clean_text;
use super::screen::use_color;

/// What a read produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A line (without its newline).
    Line(String),
    /// Ctrl+C.
    CtrlC,
    /// Ctrl+D (or the terminal closed).
    CtrlD,
}

/// A prompt that is just a text (cleaned when it is made).
pub struct TextPrompt(String);

impl TextPrompt {
    /// The prompt `text`, cleaned of control characters.
    pub fn new(text: &str) -> Self {
        Self(clean_text(text).into_owned())
    }
}

impl Prompt for TextPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.0)
    }
    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("… ")
    }
    fn render_prompt_history_search_indicator(
        &self,
        history_search: PromptHistorySearch,
    ) -> Cow<'_, str> {
        Cow::Owned(format!("(search: {}) ", history_search.term))
    }
}

/// What reedline's answer means as an [`Input`].
pub fn signal_to_input(signal: std::io::Result<Signal>) -> Input {
    match signal {
        Ok(Signal::Success(line)) => Input::Line(line),
        Ok(Signal::CtrlC) => Input::CtrlC,
        Ok(Signal::CtrlD) | Err(_) => Input::CtrlD,
        Ok(_) => Input::Line(String::new()),
    }
}

/// Whether a line editor may be used: stdin and stdout are both terminals (reedline reads
/// keys from stdin and paints on stdout).
pub fn line_editor_usable() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// Asks one question on its own line (`prompt` like `answer› `), with `prefill` already typed.
pub fn ask(prompt: &str, prefill: &str) -> Input {
    let mut editor = Reedline::create().with_ansi_colors(use_color());
    if !prefill.is_empty() {
        editor.run_edit_commands(&[EditCommand::InsertString(prefill.to_owned())]);
    }
    signal_to_input(editor.read_line(&TextPrompt::new(prompt)))
}
