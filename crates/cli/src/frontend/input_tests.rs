//! Tests of the terminal's question prompt: the box (who asks, the question, the fields), a
//! form filled field by field (typed, re-asked after a misfit, defaults left out), declined,
//! cancelled with Ctrl+C, and a plain text question answered with `userInput`.

use std::collections::VecDeque;
use std::sync::Arc;

use golem_protocol::FieldOption;
use serde_json::json;

use super::*;

/// Answers typed in advance, echoed on the screen as a terminal shows them.
struct Scripted(VecDeque<Input>);

impl Scripted {
    fn new(answers: &[&str]) -> Self {
        Self(
            answers
                .iter()
                .map(|a| Input::Line((*a).to_owned()))
                .collect(),
        )
    }
}

impl Reader for Scripted {
    fn read(&mut self, screen: &Mutex<Screen>, question: &str, _prefill: &str) -> Input {
        let input = self.0.pop_front().unwrap_or(Input::CtrlD);
        let shown = match &input {
            Input::Line(line) => line.clone(),
            Input::CtrlC => "^C".to_owned(),
            Input::CtrlD => "^D".to_owned(),
        };
        lock(screen).line(&format!("{question}{shown}"));
        input
    }

    fn editor(&self) -> Option<String> {
        None
    }
}

fn field(name: &str, field_type: FieldType, required: bool) -> FormField {
    FormField {
        name: name.into(),
        field_type,
        required,
        default: None,
        description: None,
        options: Vec::new(),
        integer: false,
    }
}

fn form() -> Question {
    let mut age = field("age", FieldType::Number, false);
    age.integer = true;
    age.default = Some(json!(42));
    let mut hero = field("hero", FieldType::Select, false);
    hero.options = vec![
        FieldOption {
            value: json!("hero-1"),
            label: "Superman".into(),
        },
        FieldOption {
            value: json!("hero-2"),
            label: "Green Lantern".into(),
        },
    ];
    let mut name = field("name", FieldType::Text, true);
    name.description = Some("Your full name".into());
    Question {
        request_id: "input-1".into(),
        prompt: "Please provide inputs\u{1b}[2J".into(),
        source: Some("MCP server `everything`".into()),
        fields: vec![name, field("check", FieldType::Boolean, false), age, hero],
    }
}

fn exchange(question: &Question, answers: &[&str]) -> (ActionEvent, String) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let screen = Mutex::new(Screen::memory(buffer.clone(), 80));
    let action = prompt(question, &screen, &mut Scripted::new(answers));
    let shown = String::from_utf8(buffer.lock().unwrap().clone()).unwrap();
    (action, shown)
}

#[test]
fn a_form_is_filled_field_by_field() {
    let (action, shown) = exchange(
        &form(),
        &[
            "",
            "",
            "Ada Lovelace",
            "maybe",
            "yes",
            "many",
            "",
            "green lantern",
        ],
    );
    let mut values = Map::new();
    values.insert("name".into(), json!("Ada Lovelace"));
    values.insert("check".into(), json!(true));
    values.insert("hero".into(), json!("hero-2"));
    assert_eq!(
        action,
        ActionEvent::InputResponse {
            request_id: "input-1".into(),
            action: InputAction::Accept,
            values: Some(values),
        }
    );
    assert!(shown.starts_with("┌ MCP server `everything` asks\n│ Please provide inputs␛[2J\n"));
    assert!(shown.contains("│ fields: name, check, age, hero\n└ [Enter] fill in"));
    assert!(shown.contains("  Your full name\n"), "{shown}");
    assert!(shown.contains("name is required"), "{shown}");
    assert!(shown.contains("'maybe' is not yes or no"), "{shown}");
    assert!(shown.contains("'many' is not a whole number"), "{shown}");
    assert!(
        shown.contains("age (integer, optional, default 42)› \n"),
        "{shown}"
    );
}

#[test]
fn a_form_can_be_declined_or_cancelled() {
    for (answers, expected) in [
        (&["d"][..], InputAction::Decline),
        (&["c"][..], InputAction::Cancel),
        (&["", "Ada"][..], InputAction::Cancel),
    ] {
        let (action, _) = exchange(&form(), answers);
        assert_eq!(
            action,
            ActionEvent::InputResponse {
                request_id: "input-1".into(),
                action: expected,
                values: None,
            },
            "{answers:?}"
        );
    }
}

#[test]
fn a_plain_question_takes_one_line() {
    let question = Question {
        request_id: "input-2".into(),
        prompt: "Name?".into(),
        source: None,
        fields: Vec::new(),
    };
    let (action, shown) = exchange(&question, &["Ada"]);
    assert_eq!(
        action,
        ActionEvent::UserInput {
            request_id: Some("input-2".into()),
            content: "Ada".into(),
        }
    );
    assert!(shown.starts_with("┌ The worker asks\n│ Name?\n└ type the answer\n"));
}

#[test]
fn values_are_typed_by_field() {
    let mut number = field("n", FieldType::Number, false);
    assert_eq!(typed(&number, "3.5"), Ok(json!(3.5)));
    assert_eq!(typed(&number, "3"), Ok(json!(3)));
    number.integer = true;
    assert!(typed(&number, "3.5").is_err());
    assert_eq!(
        typed(&field("t", FieldType::Text, false), "a, b"),
        Ok(json!("a, b"))
    );
}
