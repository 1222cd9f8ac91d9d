//! The chat's own line editor: reedline with history kept in the program's
//! `.golem-forge/chat-history` and a Tab completion menu. The short questions asked in between
//! (approval answers, notes, form fields) are `frontend::ask`'s. The prompt may name a worker,
//! so it is cleaned (`frontend::ask::TextPrompt`).

use std::path::Path;

use reedline::{
    Emacs, FileBackedHistory, KeyCode, KeyModifiers, Reedline, ReedlineEvent,
    default_emacs_keybindings,
};

use super::complete::{ChatCompleter, completion_menu};
pub use crate::frontend::ask::Input;
use crate::frontend::ask::{TextPrompt, signal_to_input};
use crate::frontend::screen::use_color;

/// The chat's own line editor.
pub struct ChatEditor {
    editor: Reedline,
    prompt: TextPrompt,
}

impl ChatEditor {
    /// An editor with `prompt`, history in `history_file` (when it can be opened) and
    /// completion from `completer`.
    pub fn new(prompt: &str, history_file: Option<&Path>, completer: ChatCompleter) -> Self {
        let mut keybindings = default_emacs_keybindings();
        keybindings.add_binding(
            KeyModifiers::NONE,
            KeyCode::Tab,
            ReedlineEvent::UntilFound(vec![
                ReedlineEvent::Menu("completion_menu".to_owned()),
                ReedlineEvent::MenuNext,
            ]),
        );
        let mut editor = Reedline::create()
            .with_ansi_colors(use_color())
            .with_quick_completions(true)
            .with_completer(Box::new(completer))
            .with_menu(completion_menu())
            .with_edit_mode(Box::new(Emacs::new(keybindings)));
        if let Some(file) = history_file
            && let Ok(history) = FileBackedHistory::with_file(1000, file.to_path_buf())
        {
            editor = editor.with_history(Box::new(history));
        }
        Self {
            editor,
            prompt: TextPrompt::new(prompt),
        }
    }

    /// Reads one line at the chat prompt.
    pub fn read(&mut self) -> Input {
        signal_to_input(self.editor.read_line(&self.prompt))
    }
}
