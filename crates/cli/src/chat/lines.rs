//! Reading lines at the terminal with reedline: the chat prompt (history kept in the program's
//! `.golem-forge/chat-history`, Tab completion menu) and the short prompts asked in between
//! (approval answers, notes, form fields, edited arguments), which may start pre-filled.
//! Prompts may name a worker or a tool's field, so they are cleaned (`frontend::clean`).

use std::borrow::Cow;
use std::path::Path;

use reedline::{
    ColumnarMenu, EditCommand, Emacs, FileBackedHistory, KeyCode, KeyModifiers, MenuBuilder,
    Prompt, PromptEditMode, PromptHistorySearch, Reedline, ReedlineEvent, ReedlineMenu, Signal,
    default_emacs_keybindings,
};

use super::complete::ChatCompleter;
use super::screen::use_color;
use crate::frontend::clean::clean_text;

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

/// A prompt that is just a text.
struct TextPrompt(String);

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

fn signal_to_input(signal: std::io::Result<Signal>) -> Input {
    match signal {
        Ok(Signal::Success(line)) => Input::Line(line),
        Ok(Signal::CtrlC) => Input::CtrlC,
        Ok(Signal::CtrlD) | Err(_) => Input::CtrlD,
        Ok(_) => Input::Line(String::new()),
    }
}

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
        let menu = ColumnarMenu::default().with_name("completion_menu");
        let mut editor = Reedline::create()
            .with_ansi_colors(use_color())
            .with_quick_completions(true)
            .with_completer(Box::new(completer))
            .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
            .with_edit_mode(Box::new(Emacs::new(keybindings)));
        if let Some(file) = history_file
            && let Ok(history) = FileBackedHistory::with_file(1000, file.to_path_buf())
        {
            editor = editor.with_history(Box::new(history));
        }
        Self {
            editor,
            prompt: TextPrompt(clean_text(prompt).into_owned()),
        }
    }

    /// Reads one line at the chat prompt.
    pub fn read(&mut self) -> Input {
        signal_to_input(self.editor.read_line(&self.prompt))
    }
}

/// Asks one question on its own line (`prompt` like `answer› `), with `prefill` already typed.
pub fn ask(prompt: &str, prefill: &str) -> Input {
    let mut editor = Reedline::create().with_ansi_colors(use_color());
    if !prefill.is_empty() {
        editor.run_edit_commands(&[EditCommand::InsertString(prefill.to_owned())]);
    }
    signal_to_input(editor.read_line(&TextPrompt(clean_text(prompt).into_owned())))
}
