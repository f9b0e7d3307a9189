//! The README's set-up is two commands, the first commands a reader meets, and they are the ones
//! the scripts provide: one sets up and runs the main job, the other sets up and runs the tests
//! (the command CI runs).

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The commands of the README's first shell block, without their comments.
fn first_commands(readme: &str) -> Vec<String> {
    let start = readme.find("```sh\n").expect("a shell block in the README") + "```sh\n".len();
    let block = &readme[start..start + readme[start..].find("```").expect("the block's end")];
    block
        .lines()
        .map(|l| l.split('#').next().unwrap().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_readme_starts_with_the_two_commands_the_scripts_provide() {
    let readme = read("README.md");
    let set_up = readme.find("## Set-up").expect("a set-up section");
    let first_block = readme.find("```").expect("a code block");
    assert!(
        set_up < first_block,
        "the set-up's commands come before every other block"
    );
    let commands = first_commands(&readme);
    assert_eq!(
        commands,
        ["bash scripts/run.sh --n 33554432", "bash scripts/test.sh"],
        "the README's first commands"
    );

    // run.sh: the set-up, then the main job with the flags it is given.
    let run = read("scripts/run.sh");
    let setup = run.find("bash scripts/setup.sh").expect("run.sh sets up");
    let main_job = run
        .find("cargo run --release --locked -p gpusort-cli -- \"$@\"")
        .expect("run.sh runs the main job with its arguments");
    assert!(setup < main_job);

    // test.sh: the set-up, then the tests; CI runs exactly it.
    let test = read("scripts/test.sh");
    let setup = test.find("bash scripts/setup.sh").expect("test.sh sets up");
    let tests = test
        .find("cargo test --workspace")
        .expect("test.sh runs the tests");
    assert!(setup < tests);
    assert!(
        read(".ci/run")
            .lines()
            .any(|l| l.trim() == "bash scripts/test.sh")
    );
}

#[test]
fn first_commands_skips_comments_and_blank_lines() {
    let readme = "x\n```sh\nbash a.sh --n 1   # one\n\n# note\nbash b.sh\n```\n```sh\nc\n```";
    assert_eq!(first_commands(readme), ["bash a.sh --n 1", "bash b.sh"]);
}
