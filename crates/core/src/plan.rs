//! Prepared calls: what a tool's `prepare` step found out about one call — the approval
//! requirement, the description, the risk — and the plan that its `execute` consumes.
//!
//! A [`Plan`] is type-erased so that the orchestrator can carry plans of every tool through
//! one path; each tool works with its own plan type ([`CallPlan`]) and gets it back with
//! [`Plan::downcast`] (the [`TypedTool`](crate::tool::TypedTool) adapter does this for it). A
//! plan of the wrong type is a bug and becomes `EXECUTION_ERROR`, never a panic.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use serde_json::Value;

use crate::approval::ApprovalRequirement;

/// What a tool's plan for one call can say before it runs.
pub trait CallPlan: Any + Send {
    /// What the call would change, for the approval prompt (a diff for file writes). The
    /// orchestrator asks only when the gate asks for the call, so pre-approved calls never pay
    /// for it. It works from what `prepare` gathered: no I/O and nothing slow here (a tool
    /// that needs either computes the preview in `prepare`, off the async threads, when its
    /// requirement is `Ask`). A plan may remember that it was shown.
    fn preview(&mut self) -> Option<ToolResultValue> {
        None
    }

    /// Called on the plan of arguments the user edited at approval, with the plan whose
    /// preview they saw (the proposed call's). A plan may take over what the user was shown,
    /// for example to refuse a file that changed since. Nothing by default.
    fn follow(&mut self, _shown: &Self)
    where
        Self: Sized,
    {
    }
}

/// A tool with no policy of its own runs with its arguments as its plan.
impl CallPlan for Value {}

/// The object-safe face of a [`CallPlan`].
trait AnyPlan: Send {
    fn preview_any(&mut self) -> Option<ToolResultValue>;
    fn follow_any(&mut self, shown: &dyn Any);
    fn as_any(&self) -> &dyn Any;
    fn into_any(self: Box<Self>) -> Box<dyn Any + Send>;
}

impl<P: CallPlan> AnyPlan for P {
    fn preview_any(&mut self) -> Option<ToolResultValue> {
        CallPlan::preview(self)
    }

    fn follow_any(&mut self, shown: &dyn Any) {
        if let Some(shown) = shown.downcast_ref::<P>() {
            CallPlan::follow(self, shown);
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

/// The plan of one prepared call, of whatever type its tool uses.
pub struct Plan(Inner);

enum Inner {
    /// Arguments as the plan, kept inline: the plan of tools with no policy of their own, on
    /// the hot path of every pre-approved call.
    Args(Value),
    /// Any other plan.
    Boxed(Box<dyn AnyPlan>),
}

impl fmt::Debug for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan").finish_non_exhaustive()
    }
}

impl Plan {
    /// Erases the type of `plan`.
    pub fn new<P: CallPlan>(plan: P) -> Plan {
        Plan(Inner::Boxed(Box::new(plan)))
    }

    /// Arguments as the plan (no preview), without an allocation; [`Plan::downcast`] gives
    /// them back as a [`Value`].
    pub fn args(args: Value) -> Plan {
        Plan(Inner::Args(args))
    }

    /// The plan's preview (see [`CallPlan::preview`]).
    pub fn preview(&mut self) -> Option<ToolResultValue> {
        match &mut self.0 {
            Inner::Args(_) => None,
            Inner::Boxed(plan) => plan.preview_any(),
        }
    }

    /// Lets this plan, made for edited arguments, follow `shown` (see [`CallPlan::follow`]);
    /// plans of different types ignore each other.
    pub fn follow(&mut self, shown: &Plan) {
        if let (Inner::Boxed(plan), Inner::Boxed(shown)) = (&mut self.0, &shown.0) {
            plan.follow_any(shown.as_any());
        }
    }

    /// The plan as the type `tool` made it; another type is a bug, reported as
    /// `EXECUTION_ERROR`.
    pub fn downcast<P: CallPlan>(self, tool: &str) -> Result<P, ToolError> {
        let plan = match self.0 {
            Inner::Args(args) => {
                let mut slot = Some(args);
                (&mut slot as &mut dyn Any)
                    .downcast_mut::<Option<P>>()
                    .and_then(Option::take)
            }
            Inner::Boxed(plan) => plan.into_any().downcast::<P>().ok().map(|plan| *plan),
        };
        plan.ok_or_else(|| {
            ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("{tool} was given a plan it did not make (a bug in golem-forge)"),
            )
        })
    }
}

/// What `prepare` found out about one call, and its plan (`P`: the tool's own plan type, or
/// the erased [`Plan`] the orchestrator carries).
#[derive(Debug)]
pub struct PreparedCall<P = Plan> {
    /// The tool's own approval requirement for the call, or `None` when it has no policy (then
    /// the configured default applies, and without configuration the call asks).
    pub requirement: Option<ApprovalRequirement>,
    /// What the call will do, in words, for the approval prompt; `None`: described as
    /// `Run <tool> with <arguments>` when the gate asks.
    pub description: Option<String>,
    /// How risky the call is.
    pub risk: Risk,
    /// What `execute` runs.
    pub plan: P,
}

impl<P> PreparedCall<P> {
    /// A call with no policy of its own, no description and medium risk.
    pub fn new(plan: P) -> Self {
        Self {
            requirement: None,
            description: None,
            risk: Risk::Medium,
            plan,
        }
    }

    /// Sets the tool's own approval requirement.
    pub fn with_requirement(mut self, requirement: ApprovalRequirement) -> Self {
        self.requirement = Some(requirement);
        self
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the risk.
    pub fn with_risk(mut self, risk: Risk) -> Self {
        self.risk = risk;
        self
    }

    /// The same call with its plan turned into another.
    pub fn map_plan<Q>(self, f: impl FnOnce(P) -> Q) -> PreparedCall<Q> {
        PreparedCall {
            requirement: self.requirement,
            description: self.description,
            risk: self.risk,
            plan: f(self.plan),
        }
    }
}

/// A call being prepared ([`Tool::prepare`](crate::tool::Tool::prepare)): ready at once, for
/// a tool with nothing to wait for (no allocation on the hot path), or a future.
pub enum Preparing<'a> {
    /// Prepared without waiting (`None` once handed out).
    Ready(Option<Result<PreparedCall, ToolError>>),
    /// Prepared by a future.
    Later(BoxFuture<'a, Result<PreparedCall, ToolError>>),
}

impl fmt::Debug for Preparing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Preparing::Ready(_) => f.write_str("Preparing::Ready"),
            Preparing::Later(_) => f.write_str("Preparing::Later"),
        }
    }
}

impl<'a> Preparing<'a> {
    /// A call prepared without waiting.
    pub fn ready(prepared: Result<PreparedCall, ToolError>) -> Self {
        Preparing::Ready(Some(prepared))
    }

    /// A call prepared by `future`.
    pub fn later(
        future: impl Future<Output = Result<PreparedCall, ToolError>> + Send + 'a,
    ) -> Self {
        Preparing::Later(Box::pin(future))
    }

    /// The same preparation with `f` applied to the prepared call.
    pub fn map(self, f: impl FnOnce(PreparedCall) -> PreparedCall + Send + 'a) -> Self {
        match self {
            Preparing::Ready(prepared) => Preparing::Ready(prepared.map(|p| p.map(f))),
            Preparing::Later(future) => Preparing::later(async move { future.await.map(f) }),
        }
    }
}

impl Future for Preparing<'_> {
    type Output = Result<PreparedCall, ToolError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            Preparing::Ready(prepared) => Poll::Ready(prepared.take().unwrap_or_else(|| {
                Err(ToolError::new(
                    ToolErrorCode::ExecutionError,
                    "a prepared call was asked for twice (a bug in golem-forge)",
                ))
            })),
            Preparing::Later(future) => future.as_mut().poll(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug)]
    struct Shown {
        path: String,
        shown: bool,
        followed: Option<String>,
    }

    impl CallPlan for Shown {
        fn preview(&mut self) -> Option<ToolResultValue> {
            self.shown = true;
            Some(ToolResultValue::text(self.path.clone()))
        }

        fn follow(&mut self, shown: &Self) {
            self.followed = Some(shown.path.clone());
        }
    }

    fn shown(path: &str) -> Shown {
        Shown {
            path: path.to_owned(),
            shown: false,
            followed: None,
        }
    }

    #[test]
    fn a_plan_comes_back_as_its_own_type() {
        let mut plan = Plan::new(shown("/a"));
        assert_eq!(plan.preview(), Some(ToolResultValue::text("/a")));
        let back: Shown = plan.downcast("t").unwrap();
        assert!(back.shown);
    }

    #[test]
    fn a_plan_of_another_type_is_an_execution_error() {
        let err = Plan::new(json!({})).downcast::<Shown>("t").unwrap_err();
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(err.message.contains("a bug"), "{}", err.message);
        assert_eq!(Plan::new(json!({})).preview(), None);
        let err = Plan::args(json!({})).downcast::<Shown>("t").unwrap_err();
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(Plan::new(shown("/a")).downcast::<Value>("t").is_err());
    }

    #[test]
    fn arguments_as_a_plan_come_back_as_they_went_in() {
        let mut plan = Plan::args(json!({"path": "/a"}));
        assert_eq!(plan.preview(), None);
        plan.follow(&Plan::args(json!({})));
        assert_eq!(plan.downcast::<Value>("t").unwrap(), json!({"path": "/a"}));
        let boxed = Plan::new(json!({"path": "/b"}));
        assert_eq!(boxed.downcast::<Value>("t").unwrap(), json!({"path": "/b"}));
    }

    #[test]
    fn an_edited_plan_follows_the_shown_one_of_its_own_type() {
        let mut edited = Plan::new(shown("/b"));
        edited.follow(&Plan::new(json!({})));
        edited.follow(&Plan::new(shown("/a")));
        let edited: Shown = edited.downcast("t").unwrap();
        assert_eq!(edited.followed.as_deref(), Some("/a"));
    }

    #[test]
    fn a_prepared_call_is_built_and_erased() {
        let prepared = PreparedCall::new(shown("/a"))
            .with_requirement(ApprovalRequirement::Ask)
            .with_description("Write /a")
            .with_risk(Risk::High)
            .map_plan(Plan::new);
        assert_eq!(prepared.requirement, Some(ApprovalRequirement::Ask));
        assert_eq!(prepared.description.as_deref(), Some("Write /a"));
        assert_eq!(prepared.risk, Risk::High);
        let defaults = PreparedCall::new(());
        assert_eq!(
            (defaults.requirement, defaults.description, defaults.risk),
            (None, None, Risk::Medium)
        );
    }
}
