//! `web_search {query, numResults?}` → a `table` of results (title, url, snippet) from the
//! configured backend (`search.rs`). Pre-approved (docs/tools.md, Web). With no backend configured,
//! or a backend whose API key is missing, `prepare` refuses the call with an error naming the
//! setting, before the gate.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{
    CallPlan, ManualExecution, PreparedCall, ToolContext, TypedTool, input_schema_for,
};
use golem_protocol::result::{ColumnDef, ColumnType, TableData};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::search::Searcher;

pub(super) const NAME: &str = "web_search";

/// Results when the call asks for no number.
pub const DEFAULT_RESULTS: u32 = 5;

/// The most results a call may ask for.
pub const MAX_RESULTS: u32 = 20;

/// Search the web.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchArgs {
    /// What to search for.
    #[schemars(length(min = 1))]
    query: String,
    /// How many results to return (default 5, at most 20).
    #[serde(default, rename = "numResults")]
    #[schemars(range(min = 1, max = 20))]
    num_results: Option<u32>,
}

/// What a `web_search` call will ask.
#[derive(Debug)]
pub struct WebSearchPlan {
    query: String,
    count: usize,
}

impl CallPlan for WebSearchPlan {}

/// The `web_search` tool.
#[derive(Debug)]
pub struct WebSearch {
    searcher: Option<Searcher>,
    description: String,
    schema: Value,
}

/// The error of a toolset with no `search:`.
fn no_backend() -> ToolError {
    ToolError::new(
        ToolErrorCode::ExecutionError,
        "web_search has no search backend: set toolsets.web.search in the worker file \
         (backend: searxng with the url of an instance, or brave or tavily with BRAVE_API_KEY \
         or TAVILY_API_KEY in the environment)",
    )
}

impl WebSearch {
    pub(super) fn new(searcher: Option<Searcher>) -> WebSearch {
        let backend = match &searcher {
            Some(searcher) => format!("Results come from {}.", searcher.backend()),
            None => "No search backend is configured for this worker: calls fail.".to_owned(),
        };
        let description = format!(
            "Search the web and return the results as a table of title, URL and snippet. \
             {backend} Use web_fetch to read a result."
        );
        WebSearch {
            searcher,
            description,
            schema: input_schema_for::<WebSearchArgs>(),
        }
    }
}

#[async_trait]
impl TypedTool for WebSearch {
    type Args = WebSearchArgs;
    type Plan = WebSearchPlan;

    fn name(&self) -> &str {
        NAME
    }

    /// The user may search too (`/web_search --query …` in a chat).
    fn execution(&self) -> ManualExecution {
        ManualExecution::both("Search the web", Some("Web"))
    }

    fn kind(&self) -> golem_protocol::ToolKind {
        golem_protocol::ToolKind::Search
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn approval_policy(&self) -> Option<String> {
        Some(match &self.searcher {
            Some(searcher) => format!(
                "pre-approved ({} at {})",
                searcher.backend().as_str(),
                searcher.base()
            ),
            None => "pre-approved (no backend: calls fail)".to_owned(),
        })
    }

    async fn prepare(
        &self,
        args: WebSearchArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<WebSearchPlan>, ToolError> {
        let searcher = self.searcher.as_ref().ok_or_else(no_backend)?;
        if let Some(why) = searcher.unusable() {
            return Err(ToolError::new(ToolErrorCode::ExecutionError, why));
        }
        let query = args.query.trim().to_owned();
        if query.is_empty() {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                "the query is empty",
            ));
        }
        let count = args
            .num_results
            .unwrap_or(DEFAULT_RESULTS)
            .clamp(1, MAX_RESULTS);
        let description = format!(
            "Search {} for \"{}\" ({count} results)",
            searcher.backend(),
            fold(&query, 200)
        );
        Ok(PreparedCall::new(WebSearchPlan {
            query,
            count: count as usize,
        })
        .with_requirement(ApprovalRequirement::PreApproved)
        .with_description(description)
        .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        plan: WebSearchPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let searcher = self.searcher.as_ref().ok_or_else(no_backend)?;
        let hits = tokio::select! {
            () = ctx.cancel.cancelled() => {
                return Err(ToolError::new(
                    ToolErrorCode::Interrupted,
                    "the search was interrupted",
                ));
            }
            hits = searcher.search(&plan.query, plan.count) => hits?,
        };
        let column = |key: &str, label: &str| ColumnDef {
            key: key.to_owned(),
            label: Some(label.to_owned()),
            column_type: Some(ColumnType::String),
            align: None,
        };
        let rows = hits
            .into_iter()
            .map(|hit| {
                let mut row = serde_json::Map::new();
                row.insert("title".into(), Value::String(hit.title));
                row.insert("url".into(), Value::String(hit.url));
                row.insert("snippet".into(), Value::String(hit.snippet));
                row
            })
            .collect::<Vec<_>>();
        let n = rows.len();
        let summary = match n {
            0 => format!("no results for \"{}\" ({})", plan.query, searcher.backend()),
            1 => format!("1 result for \"{}\" ({})", plan.query, searcher.backend()),
            n => format!(
                "{n} results for \"{}\" ({})",
                plan.query,
                searcher.backend()
            ),
        };
        Ok(ToolResultValue::table(TableData {
            columns: vec![
                column("title", "Title"),
                column("url", "URL"),
                column("snippet", "Snippet"),
            ],
            rows,
        })
        .with_summary(summary))
    }
}
