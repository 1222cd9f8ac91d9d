//! JUnit XML of a test run, as CI systems read it: one `<testsuite>` per test file, one
//! `<testcase>` per case and run, a `<failure>` per failed case with every message. Text is
//! escaped, and characters XML 1.0 cannot hold are dropped. Written through a temp file and a
//! rename.

use std::io::Write;
use std::path::Path;

use crate::run::CaseReport;

/// The JUnit XML document of `reports`.
pub fn junit_xml(reports: &[CaseReport]) -> String {
    let mut files: Vec<&Path> = Vec::new();
    for report in reports {
        if !files.contains(&report.file.as_path()) {
            files.push(&report.file);
        }
    }
    let total_failed = reports.iter().filter(|r| !r.passed()).count();
    let total_time: f64 = reports.iter().map(|r| r.duration.as_secs_f64()).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"golem-forge test\" tests=\"{}\" failures=\"{total_failed}\" errors=\"0\" time=\"{total_time:.3}\">\n",
        reports.len()
    ));
    for file in files {
        let of_file: Vec<&CaseReport> = reports.iter().filter(|r| r.file == file).collect();
        let failed = of_file.iter().filter(|r| !r.passed()).count();
        let time: f64 = of_file.iter().map(|r| r.duration.as_secs_f64()).sum();
        let worker = of_file.first().map_or("", |r| r.worker.as_str());
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failed}\" errors=\"0\" skipped=\"0\" time=\"{time:.3}\" file=\"{}\">\n",
            escape(worker),
            of_file.len(),
            escape(&file.display().to_string())
        ));
        for report in &of_file {
            // A case run more than once names each run.
            let several = of_file.iter().any(|r| r.case == report.case && r.run > 1);
            let name = if several {
                format!("{} (run {})", report.case, report.run)
            } else {
                report.case.clone()
            };
            xml.push_str(&format!(
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
                escape(&name),
                escape(&report.worker),
                report.duration.as_secs_f64()
            ));
            if report.passed() {
                xml.push_str("/>\n");
                continue;
            }
            let first = report
                .failures
                .first()
                .map(|f| f.expectation.clone())
                .unwrap_or_default();
            let body = report
                .failures
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n\n");
            xml.push_str(&format!(
                ">\n      <failure message=\"{}\" type=\"expectation\">{}</failure>\n    </testcase>\n",
                escape(&format!("{} failed", first)),
                escape(&body)
            ));
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Writes the JUnit XML of `reports` to `path` through a temp file beside it and a rename.
pub fn write_junit(path: &Path, reports: &[CaseReport]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        Some(_) | None => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(junit_xml(reports).as_bytes())?;
    file.flush()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// `text` as XML character data or an attribute value.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expect::Failure;
    use std::time::Duration;

    #[test]
    fn escapes_markup_and_controls_and_counts() {
        let report = |case: &str, failures: Vec<Failure>| CaseReport {
            case: case.into(),
            worker: "w".into(),
            file: "/p/w.test.yaml".into(),
            run: 1,
            failures,
            calls: 0,
            usage: Default::default(),
            cost: None,
            duration: Duration::from_millis(5),
            replies: None,
        };
        let xml = junit_xml(&[
            report("a <b> & \"c\"", vec![]),
            report(
                "d",
                vec![Failure {
                    expectation: "expect.answer".into(),
                    message: "was \u{1b}[31m]]> 'x'".into(),
                }],
            ),
        ]);
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(
            xml.contains("name=\"a &lt;b&gt; &amp; &quot;c&quot;\""),
            "{xml}"
        );
        assert!(xml.contains("was \\u{1b}[31m]]&gt; &apos;x&apos;"), "{xml}");
        assert!(!xml.contains('\u{1b}'));
    }
}
