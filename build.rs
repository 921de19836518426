//! Embeds every `rules/*.toml` so the binary carries its rule data and docs, and writes the
//! engines' flag tables as JSON (serde_json reads them several times faster than toml at startup).
use std::{env, fs, path::Path};

fn main() {
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("rules");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = String::from("pub const RULE_FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy();
        out.push_str(&format!(
            "    ({name:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
    }
    out.push_str("];\n");
    let out_dir = env::var("OUT_DIR").unwrap();
    fs::write(Path::new(&out_dir).join("rule_files.rs"), out).unwrap();
    let platforms = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("platforms");
    fs::write(
        Path::new(&out_dir).join("platform_files.rs"),
        embed("PLATFORM_FILES", &platforms),
    )
    .unwrap();
    let manifest = env::var("CARGO_MANIFEST_DIR").unwrap();
    flag_tables(
        &Path::new(&manifest).join("src/engine"),
        Path::new(&out_dir),
    );
}

/// `pub const NAME: &[(file name, text)]` of every `.toml` in `dir`, sorted by name.
fn embed(name: &str, dir: &Path) -> String {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "toml"));
    files.sort();
    let mut out = format!("pub const {name}: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let file = f.file_name().unwrap().to_string_lossy();
        out.push_str(&format!(
            "    ({file:?}, include_str!({:?})),\n",
            f.display().to_string()
        ));
    }
    out.push_str("];\n");
    out
}

/// `src/engine/{sglang,vllm}_flags.toml` → `$OUT_DIR/*_flags.json`, the same table.
fn flag_tables(engine_dir: &Path, out_dir: &Path) {
    for name in ["sglang_flags", "vllm_flags"] {
        let src = engine_dir.join(format!("{name}.toml"));
        println!("cargo:rerun-if-changed={}", src.display());
        let text = fs::read_to_string(&src).unwrap();
        let table: toml::Value =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        let json = serde_json::to_string(&table).unwrap();
        fs::write(out_dir.join(format!("{name}.json")), json).unwrap();
    }
}
