//! YAML output: an object (built as JSON, so keys come out sorted and the output is stable) with
//! an optional comment header. Multi-line strings become literal block scalars (`|`), so unit
//! files stay readable in a MachineConfig.

use super::RenderError;

/// Renders `value` as one YAML document, preceded by `comments` as `# ` lines.
pub(crate) fn document(
    object: &str,
    comments: &[String],
    value: &serde_json::Value,
) -> Result<String, RenderError> {
    let body = serde_yaml_ng::to_string(value).map_err(|e| RenderError::Serialise {
        object: object.to_string(),
        message: e.to_string(),
    })?;
    let mut out = String::new();
    for c in comments {
        if c.is_empty() {
            out.push_str("#\n");
        }
        for line in c.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                out.push_str("#\n");
            } else {
                out.push_str("# ");
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.push_str(&body);
    Ok(out)
}
