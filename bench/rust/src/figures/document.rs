//! The marked blocks of a document, and what each kind of block renders.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{
    adaptive, components, download, freshness, goals, hedging, overhead, per_call, registry,
    resilience, vs_java, Block, Error, RawFile, Result, CHART_DIR, DOCUMENTS,
};

/// A file as rendering would leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Relative to the repository's root.
    pub path: PathBuf,
    /// Its rendered contents; `None` for a chart no block draws any more, which must not exist.
    pub contents: Option<String>,
}

/// The end of every block.
const END: &str = "<!-- end -->";

/// One marker: its kind and raw files, and where its block is in the document's lines.
struct Marker {
    chart: bool,
    kind: String,
    files: Vec<String>,
    /// Index of the marker line.
    start: usize,
    /// Index of the end line.
    end: usize,
}

/// Renders every document under `root` and every chart they draw: what each file must hold.
/// Charts in [`CHART_DIR`] that no block draws are listed with no contents.
pub fn render(root: &Path) -> Result<Vec<Output>> {
    let mut goals = Vec::new();
    let mut pending = Vec::new();
    let mut charts = BTreeSet::new();
    let mut outputs = Vec::new();
    // Every block but the goals first, so that the goals tables see every goal.
    for name in DOCUMENTS {
        let text = std::fs::read_to_string(root.join(name))
            .map_err(|err| Error::new(format!("{name}: {err}")))?;
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let markers = markers(&lines).map_err(|err| Error::new(format!("{name}: {err}")))?;
        let mut blocks = Vec::new();
        for marker in &markers {
            if marker.kind == "goals" {
                blocks.push(None);
                continue;
            }
            let files = marker
                .files
                .iter()
                .map(|file| RawFile::load(root, file))
                .collect::<Result<Vec<_>>>()?;
            let block = block(&marker.kind, marker.chart, &files)
                .map_err(|err| Error::new(format!("{name}, `{}`: {err}", marker.kind)))?;
            goals.extend(block.goals.iter().cloned());
            if let Some((file, svg)) = &block.chart {
                charts.insert(file.clone());
                outputs.push(Output {
                    path: Path::new(CHART_DIR).join(file),
                    contents: Some(svg.clone()),
                });
            }
            blocks.push(Some(block.markdown));
        }
        pending.push((name, lines, markers, blocks));
    }
    for (name, lines, markers, blocks) in pending {
        let blocks: Vec<String> = blocks
            .into_iter()
            .map(|block| block.unwrap_or_else(|| goals::table(&goals)))
            .collect();
        outputs.push(Output {
            path: PathBuf::from(name),
            contents: Some(replace(&lines, &markers, &blocks)),
        });
    }
    outputs.extend(stale_charts(root, &charts));
    Ok(outputs)
}

/// The outputs of [`render`] that the files under `root` do not hold yet: a file that differs,
/// is missing, or (a stale chart) should not exist.
pub fn differing(root: &Path) -> Result<Vec<Output>> {
    Ok(render(root)?
        .into_iter()
        .filter(|output| std::fs::read_to_string(root.join(&output.path)).ok() != output.contents)
        .collect())
}

/// SVG files in the chart folder that no block draws.
fn stale_charts(root: &Path, drawn: &BTreeSet<String>) -> Vec<Output> {
    let Ok(entries) = std::fs::read_dir(root.join(CHART_DIR)) else {
        return Vec::new();
    };
    let mut stale: Vec<Output> = entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|file| file.ends_with(".svg") && !drawn.contains(file))
        .map(|file| Output {
            path: Path::new(CHART_DIR).join(file),
            contents: None,
        })
        .collect();
    stale.sort_by(|a, b| a.path.cmp(&b.path));
    stale
}

/// The markers of a document, in order.
fn markers(lines: &[String]) -> Result<Vec<Marker>> {
    let mut markers = Vec::new();
    let mut open: Option<Marker> = None;
    for (index, line) in lines.iter().enumerate() {
        let line = line.trim();
        if line == END {
            let mut marker = open.take().ok_or_else(|| {
                Error::new(format!("line {}: an end without a marker", index + 1))
            })?;
            marker.end = index;
            markers.push(marker);
            continue;
        }
        let Some(inner) = line
            .strip_prefix("<!--")
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            continue;
        };
        let inner = inner.trim();
        let (chart, rest) = if let Some(rest) = inner.strip_prefix("table:") {
            (false, rest)
        } else if let Some(rest) = inner.strip_prefix("chart:") {
            (true, rest)
        } else {
            continue;
        };
        if let Some(unclosed) = &open {
            return Err(Error::new(format!(
                "line {}: `{}` has no end before the next marker",
                unclosed.start + 1,
                unclosed.kind
            )));
        }
        let mut words = rest.split_whitespace().map(str::to_owned);
        let kind = words
            .next()
            .ok_or_else(|| Error::new(format!("line {}: a marker without a kind", index + 1)))?;
        open = Some(Marker {
            chart,
            kind,
            files: words.collect(),
            start: index,
            end: index,
        });
    }
    if let Some(unclosed) = open {
        return Err(Error::new(format!(
            "line {}: `{}` has no end",
            unclosed.start + 1,
            unclosed.kind
        )));
    }
    Ok(markers)
}

/// The document with each block's lines replaced by its rendering.
fn replace(lines: &[String], markers: &[Marker], blocks: &[String]) -> String {
    let mut text = String::new();
    let mut next = 0;
    for (marker, block) in markers.iter().zip(blocks) {
        for line in &lines[next..=marker.start] {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(block);
        next = marker.end;
    }
    for line in &lines[next..] {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// What `kind` renders from `files`.
fn block(kind: &str, chart: bool, files: &[RawFile]) -> Result<Block> {
    let one = || match files {
        [file] => Ok(file),
        _ => Err(Error::new(format!(
            "takes one raw file, not {}",
            files.len()
        ))),
    };
    if chart {
        return match kind {
            "resilience/killed" | "resilience/slow" => {
                resilience::chart(kind.trim_start_matches("resilience/"), one()?)
            }
            _ => Err(Error::new("no such chart")),
        };
    }
    match kind {
        "per-call/instructions" => per_call::instructions(one()?),
        "per-call/cpu" => per_call::cpu(one()?),
        "per-call/allocations" => per_call::allocations(one()?),
        "per-call/change" => per_call::change(files),
        "overhead" => overhead::block(one()?),
        "vs-java/clients" => vs_java::clients(one()?),
        "vs-java/ratios" => vs_java::ratios(one()?),
        "resilience/killed" => resilience::killed(one()?),
        "resilience/slow" => resilience::slow(one()?),
        "adaptive" => adaptive::block(one()?),
        "hedging" => hedging::block(one()?),
        "freshness" => freshness::block(one()?),
        "download" => download::block(files),
        "criterion" => components::criterion(one()?),
        "pick" => components::pick(files),
        "slow-backend" => components::slow_backend(one()?),
        "client-registry" => components::client_registry(one()?),
        "registry/latency" => registry::latency(one()?),
        "registry/ratios" => registry::ratios(one()?),
        "dashboard" => registry::dashboard(files),
        _ => Err(Error::new("no such table")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn a_block_is_replaced_and_the_rest_kept() {
        let doc =
            lines("intro\n<!-- table: overhead a.txt b.txt -->\nold\nlines\n<!-- end -->\nafter");
        let found = markers(&doc).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, "overhead");
        assert_eq!(found[0].files, ["a.txt", "b.txt"]);
        assert_eq!(
            replace(&doc, &found, &["new\n".to_owned()]),
            "intro\n<!-- table: overhead a.txt b.txt -->\nnew\n<!-- end -->\nafter\n"
        );
    }

    #[test]
    fn unclosed_and_stray_markers_are_refused() {
        assert!(markers(&lines("<!-- table: x a.txt -->\ntext")).is_err());
        assert!(markers(&lines("<!-- end -->")).is_err());
        assert!(markers(&lines("<!-- table: x -->\n<!-- table: y -->\n<!-- end -->")).is_err());
        assert!(markers(&lines("<!-- table: -->\n<!-- end -->")).is_err());
        assert!(markers(&lines("<!-- a comment -->")).unwrap().is_empty());
    }
}
