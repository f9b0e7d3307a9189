//! No import circles: in each crate, the modules that a module's `use` lines name (other than its
//! own ancestors, whose items a child may always use) form no cycle, so the layering the crate
//! docs describe is the one in the code. Run alone with `cargo test -p xtask --test layers`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path in its crate, e.g. `["gpu", "radix"]`; the crate root is `[]`.
type ModulePath = Vec<String>;

/// Every module of the crate whose root is `src/lib.rs` (or `main.rs`) under `dir`, with its file.
fn modules(dir: &Path) -> BTreeMap<ModulePath, PathBuf> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(dir).unwrap().with_extension("");
                let mut parts: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    parts.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    parts.pop();
                }
                found.insert(parts, path);
            }
        }
    }
    found
}

/// The `use` declarations of a file, whole (one per statement), outside comments.
fn uses(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in source.lines() {
        let line = line.trim();
        if line.starts_with("//") {
            continue;
        }
        if let Some(statement) = current.as_mut() {
            statement.push_str(line);
        } else if let Some(rest) = line
            .strip_prefix("pub(crate) use ")
            .or_else(|| line.strip_prefix("pub(super) use "))
            .or_else(|| line.strip_prefix("pub use "))
            .or_else(|| line.strip_prefix("use "))
        {
            current = Some(rest.to_string());
        }
        if current.as_ref().is_some_and(|s| s.ends_with(';')) {
            out.push(current.take().unwrap());
        }
    }
    out
}

/// The paths written out in code (not comments) from the crate's root or a parent, such as
/// `crate::tuning::X` or `super::radix::f(…)`.
fn inline_paths(source: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in source
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
    {
        let line = line.split("//").next().unwrap();
        for start in ["crate::", "super::"] {
            let mut from = 0;
            while let Some(i) = line[from..].find(start) {
                let at = from + i;
                from = at + start.len();
                if at > 0 && !line[..at].ends_with(|c: char| !c.is_alphanumeric() && c != '_') {
                    continue;
                }
                let end = line[at..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .map_or(line.len(), |e| at + e);
                let path = line[at..end].trim_end_matches(':');
                out.push(path.split("::").map(str::to_string).collect());
            }
        }
    }
    out
}

/// The paths a `use` tree names, each as its segments: `a::{b, c::d}` gives `a::b`, `a::c::d`.
fn paths(tree: &str) -> Vec<Vec<String>> {
    // `x as y` names `x`: mark the rename before the spaces go.
    let tree = tree.replace(" as ", "@");
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let tree = tree.trim_end_matches(';');
    let mut out = Vec::new();
    expand("", tree, &mut out);
    out.into_iter()
        .map(|p| p.split("::").map(str::to_string).collect())
        .collect()
}

fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    if let Some(open) = tree.find('{') {
        let head = format!("{prefix}{}", &tree[..open]);
        let inner = &tree[open + 1..tree.rfind('}').unwrap()];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&head, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&head, &inner[start..], out);
    } else if !tree.is_empty() {
        let path = tree.split('@').next().unwrap();
        out.push(
            format!("{prefix}{path}")
                .trim_end_matches("::self")
                .to_string(),
        );
    }
}

/// The module a path in module `from` names: resolved from `crate`, `super` or `self`, and cut
/// to the longest prefix that is a module of the crate. `None` for other crates.
fn target(
    from: &ModulePath,
    path: &[String],
    known: &BTreeMap<ModulePath, PathBuf>,
) -> Option<ModulePath> {
    let mut at: ModulePath = match path.first()?.as_str() {
        "crate" => vec![],
        "super" | "self" => from.clone(),
        _ => {
            // A child module named directly, as `use child::item` from its parent.
            let mut child = from.clone();
            child.push(path[0].clone());
            if !known.contains_key(&child) {
                return None;
            }
            from.clone()
        }
    };
    let mut rest = path;
    if path[0] == "crate" || path[0] == "self" {
        rest = &path[1..];
    }
    while rest.first().is_some_and(|s| s == "super") {
        at.pop();
        rest = &rest[1..];
    }
    for segment in rest {
        let mut next = at.clone();
        next.push(segment.clone());
        if !known.contains_key(&next) {
            break;
        }
        at = next;
    }
    Some(at)
}

/// The import edges of the crate at `dir` that are not to an ancestor.
fn edges(dir: &Path) -> BTreeMap<ModulePath, BTreeSet<ModulePath>> {
    let known = modules(dir);
    let mut graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for (module, file) in &known {
        let source = std::fs::read_to_string(file).unwrap();
        let mut named: Vec<Vec<String>> = uses(&source).iter().flat_map(|t| paths(t)).collect();
        named.extend(inline_paths(&source));
        {
            for path in named {
                let Some(to) = target(module, &path, &known) else {
                    continue;
                };
                let ancestor = to.len() <= module.len() && module[..to.len()] == to[..];
                if !ancestor {
                    graph.entry(module.clone()).or_default().insert(to);
                }
            }
        }
    }
    graph
}

/// A cycle of the graph, if there is one.
fn cycle(graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Option<Vec<ModulePath>> {
    fn visit(
        node: &ModulePath,
        graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        done: &mut BTreeSet<ModulePath>,
        path: &mut Vec<ModulePath>,
    ) -> Option<Vec<ModulePath>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            return Some(path[i..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, done, path) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn no_crate_has_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut circles = Vec::new();
    for krate in ["kernels-gpu/src", "gpusort/src", "gpusort-cli/src"] {
        let mut graph = edges(&root.join(krate));
        // Every circle, each reported once: the edge that closes it is dropped before looking on.
        while let Some(c) = cycle(&graph) {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            circles.push(format!("{krate}: {} -> back", names.join(" -> ")));
            let (last, first) = (c.last().unwrap(), &c[0]);
            graph.get_mut(last).unwrap().remove(first);
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_circle_check_sees_circles() {
    let dir = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("gpu")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod gpu;\nuse crate::gpu::a::X;\n").unwrap();
    std::fs::write(dir.join("gpu/mod.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(dir.join("gpu/a.rs"), "use super::{b::{self, Y}, Z};\n").unwrap();
    std::fs::write(dir.join("gpu/b.rs"), "use crate::gpu::a::X;\n").unwrap();
    let found = cycle(&edges(&dir));
    std::fs::write(dir.join("gpu/b.rs"), "use super::Z;\n").unwrap();
    let none = cycle(&edges(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    let strings = |m: &ModulePath| m.join("::");
    assert_eq!(
        found.unwrap().iter().map(strings).collect::<Vec<_>>(),
        ["gpu::a", "gpu::b"]
    );
    assert_eq!(none, None);
}

#[test]
fn use_trees_expand_to_paths() {
    let got = paths("super::{b::{self, Y}, c as d, e::f::*};");
    let joined: Vec<String> = got.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        ["super::b", "super::b::Y", "super::c", "super::e::f::*"]
    );
}
