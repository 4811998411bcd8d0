// The ready line's `version` is the tonic actually linked: its version in Cargo.lock (tonic
// exports no version constant). hyper's and h2's go into the notes.
use std::fs;

fn locked(lock: &str, name: &str) -> String {
    let needle = format!("name = \"{name}\"\nversion = \"");
    match lock.find(&needle) {
        Some(at) => {
            let rest = &lock[at + needle.len()..];
            rest[..rest.find('"').unwrap_or(0)].to_string()
        }
        None => "unknown".to_string(),
    }
}

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = fs::read_to_string("Cargo.lock").unwrap_or_default();
    for (env, name) in [
        ("KIT_TONIC_VERSION", "tonic"),
        ("KIT_HYPER_VERSION", "hyper"),
        ("KIT_H2_VERSION", "h2"),
    ] {
        println!("cargo:rustc-env={env}={}", locked(&lock, name));
    }
}
