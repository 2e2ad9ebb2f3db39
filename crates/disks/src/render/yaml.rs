//! YAML output: an object (built as JSON, so keys come out sorted and the output is stable) with
//! an optional comment header. Multi-line strings become literal block scalars (`|`), so unit
//! files stay readable in a MachineConfig.

use super::RenderError;

/// A Pod document: `name`, one container and one volume, on the nodes `node_selector` picks,
/// headed by `comment`.
pub(crate) fn pod(
    name: &str,
    node_selector: serde_json::Value,
    container: serde_json::Value,
    volume: serde_json::Value,
    comment: String,
) -> Result<String, RenderError> {
    let obj = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"nodeSelector": node_selector, "containers": [container], "volumes": [volume]},
    });
    document("Pod", &[comment], &obj)
}

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
