//! The question prompt at the terminal, one for `run` and `chat`: answers the session host's
//! `inputRequired` events. A plain question (no fields) takes one line of text, sent as
//! `userInput`. A form (a tool's question, such as an MCP server's elicitation) shows who asks
//! and what, then `answer›`: Enter (or `f`) fills it in, one prompt per field (its type,
//! whether it is required, its default and choices; an empty answer leaves the field to its
//! default), `d` declines, `c` or Ctrl+C cancels; the values go back as `inputResponse`.
//! Numbers, yes/no and choices are typed here, asked again when they do not fit; the runtime
//! types the rest by the tool's schema and asks again, with the reason, when the whole does not
//! fit. Everything shown comes from outside (a server's message), so it is drawn cleaned.

use std::sync::Mutex;

use golem_protocol::{ActionEvent, FieldType, FormField, InputAction};
use serde_json::{Map, Number, Value};

use super::approval::{PromptContext, Reader, TerminalReader, lock};
use super::ask::Input;
use super::clean::clean_text;
use super::screen::{Screen, Tone};
use crate::chat::form::field_prompt;

/// The question asked under the box.
const ANSWER: &str = "answer› ";
/// The last line of a form's box.
const CHOICES: &str = "[Enter] fill in  [d] decline  [c] cancel";

/// One `inputRequired` event, as the prompt needs it.
#[derive(Debug, Clone)]
pub struct Question {
    /// Its id, for the answer.
    pub request_id: String,
    /// What is asked.
    pub prompt: String,
    /// Who asks.
    pub source: Option<String>,
    /// The form; empty for a text question.
    pub fields: Vec<FormField>,
}

/// Asks `question` at the terminal (on a thread of its own, with the key watcher paused) and
/// returns the action that answers it.
pub async fn answer(question: Question, context: PromptContext) -> ActionEvent {
    let (done, answer) = tokio::sync::oneshot::channel();
    let id = question.request_id.clone();
    let started = std::thread::Builder::new()
        .name("input-prompt".to_owned())
        .spawn(move || {
            if let Some(keys) = &context.keys {
                keys.pause();
            }
            let mut reader = TerminalReader::new();
            let action = prompt(&question, &context.screen, &mut reader);
            if let Some(keys) = &context.keys {
                keys.resume();
            }
            let _ = done.send(action);
        });
    let cancel = || ActionEvent::InputResponse {
        request_id: id.clone(),
        action: InputAction::Cancel,
        values: None,
    };
    if started.is_err() {
        return cancel();
    }
    answer.await.unwrap_or_else(|_| cancel())
}

/// The box shown for `question`.
pub fn render_question(question: &Question, screen: &Screen) -> String {
    let bar = screen.dim("│");
    let who = question.source.as_deref().unwrap_or("The worker");
    let mut text = format!("┌ {} asks\n", screen.paint(Tone::Bold, who));
    for line in question.prompt.lines() {
        text.push_str(&format!("{bar} {}\n", clean_text(line)));
    }
    if question.fields.is_empty() {
        text.push_str(&format!("└ {}\n", screen.dim("type the answer")));
    } else {
        let names: Vec<String> = question
            .fields
            .iter()
            .map(|f| clean_text(&f.name).into_owned())
            .collect();
        text.push_str(&format!(
            "{bar} {}\n",
            screen.dim(&format!("fields: {}", names.join(", ")))
        ));
        text.push_str(&format!("└ {}\n", screen.dim(CHOICES)));
    }
    text
}

/// Shows `question` and reads its answer (blocking).
fn prompt(question: &Question, screen: &Mutex<Screen>, reader: &mut dyn Reader) -> ActionEvent {
    {
        let mut screen = lock(screen);
        screen.stop_spin();
        let text = render_question(question, &screen);
        screen.line(&text);
    }
    let request_id = question.request_id.clone();
    let refuse = |action| ActionEvent::InputResponse {
        request_id: request_id.clone(),
        action,
        values: None,
    };
    if question.fields.is_empty() {
        return match reader.read(screen, ANSWER, "") {
            Input::Line(content) => ActionEvent::UserInput {
                request_id: Some(request_id.clone()),
                content,
            },
            Input::CtrlC | Input::CtrlD => refuse(InputAction::Cancel),
        };
    }
    loop {
        let choice = match reader.read(screen, ANSWER, "") {
            Input::Line(line) => line.trim().to_lowercase(),
            Input::CtrlC | Input::CtrlD => return refuse(InputAction::Cancel),
        };
        match choice.as_str() {
            "" | "f" | "fill" | "y" | "yes" => {}
            "d" | "decline" | "n" | "no" => return refuse(InputAction::Decline),
            "c" | "cancel" | "q" => return refuse(InputAction::Cancel),
            _ => {
                say(screen, &format!("answer with Enter, d or c ({CHOICES})"));
                continue;
            }
        }
        return match fill(&question.fields, screen, reader) {
            Some(values) => ActionEvent::InputResponse {
                request_id: request_id.clone(),
                action: InputAction::Accept,
                values: Some(values),
            },
            None => refuse(InputAction::Cancel),
        };
    }
}

fn say(screen: &Mutex<Screen>, text: &str) {
    let mut screen = lock(screen);
    let text = screen.paint(Tone::Red, text);
    screen.line(&text);
}

/// Asks for every field; `None` when the user gave up (Ctrl+C / Ctrl+D).
fn fill(
    fields: &[FormField],
    screen: &Mutex<Screen>,
    reader: &mut dyn Reader,
) -> Option<Map<String, Value>> {
    let mut values = Map::new();
    for field in fields {
        if let Some(description) = &field.description {
            let mut screen = lock(screen);
            let text = screen.dim(&format!("  {description}"));
            screen.line(&text);
        }
        loop {
            let answer = match reader.read(screen, &field_prompt(field), "") {
                Input::Line(line) => line.trim().to_owned(),
                Input::CtrlC | Input::CtrlD => return None,
            };
            if answer.is_empty() {
                if field.required && field.default.is_none() {
                    say(screen, &format!("  {} is required", field.name));
                    continue;
                }
                break;
            }
            match typed(field, &answer) {
                Ok(value) => {
                    values.insert(field.name.clone(), value);
                    break;
                }
                Err(e) => say(screen, &format!("  {e}")),
            }
        }
    }
    Some(values)
}

/// `answer` as the value of `field`: a number, yes/no, one of the choices (by value or
/// label), or the text itself.
pub fn typed(field: &FormField, answer: &str) -> Result<Value, String> {
    match field.field_type {
        FieldType::Text => Ok(Value::String(answer.to_owned())),
        FieldType::Number if field.integer => answer
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("'{answer}' is not a whole number")),
        FieldType::Number => answer
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(|n| match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
                _ => Value::Number(n),
            })
            .ok_or_else(|| format!("'{answer}' is not a number")),
        FieldType::Boolean => match answer.to_lowercase().as_str() {
            "y" | "yes" | "true" | "on" | "1" => Ok(Value::Bool(true)),
            "n" | "no" | "false" | "off" | "0" => Ok(Value::Bool(false)),
            _ => Err(format!("'{answer}' is not yes or no")),
        },
        FieldType::Select => field
            .options
            .iter()
            .find(|option| {
                let value = match &option.value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                value == answer || option.label.eq_ignore_ascii_case(answer)
            })
            .map(|option| option.value.clone())
            .ok_or_else(|| {
                let choices: Vec<String> = field
                    .options
                    .iter()
                    .map(|o| clean_text(&o.label).into_owned())
                    .collect();
                format!("'{answer}' is not one of {}", choices.join(", "))
            }),
    }
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
