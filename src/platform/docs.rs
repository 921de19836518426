//! A platform's docs as `kvlint platforms NAME` prints them and as the book's platform page
//! (`docs/src/platforms.md`) and the README table show them, from the same data.

use super::Platform;

/// The engine a platform runs, or where it is named.
pub fn engine(p: &Platform) -> String {
    match (&p.engine, &p.engine_from) {
        (Some(e), _) => serde_json::to_value(e)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        (None, Some(from)) => format!("from {}", from.path),
        (None, None) => String::new(),
    }
}

/// How the platform's files are told apart, in words.
pub fn recognition(p: &Platform) -> String {
    let r = &p.recognize;
    let mut parts = Vec::new();
    if !r.kinds.is_empty() {
        parts.push(format!("Kubernetes kind {}", r.kinds.join(" or ")));
    }
    if let Some(e) = &r.embedded_in {
        parts.push(format!(
            "YAML in `{}` of a {}",
            e.path,
            e.kinds.join(" or ")
        ));
    }
    if !r.files.is_empty() {
        parts.push(format!("file named {}", r.files.join(" or ")));
    }
    if !r.paths.is_empty() {
        let paths: Vec<String> = r.paths.iter().map(|p| format!("`{p}`")).collect();
        parts.push(format!("with {}", paths.join(", ")));
    }
    if !r.absent.is_empty() {
        let paths: Vec<String> = r.absent.iter().map(|p| format!("`{p}`")).collect();
        parts.push(format!("without {}", paths.join(", ")));
    }
    parts.join("; ")
}

/// The full docs of one platform, as plain text.
pub fn text(p: &Platform) -> String {
    let mut out = format!("{} — {} (engine: {})\n\n", p.name, p.title, engine(p));
    out.push_str(&format!("What:        {}\n", p.docs.what));
    out.push_str(&format!("Settings:    {}\n", p.docs.settings));
    out.push_str(&format!("Recognized:  {}\n", recognition(p)));
    out.push_str(&format!("Docs:        {}\n", p.docs.source));
    for e in &p.docs.examples {
        out.push_str(&format!("Example:     {e}\n"));
    }
    out
}

/// The book page listing every built-in platform.
pub fn book_page(all: &[Platform]) -> String {
    let mut out = String::from(
        "<!-- Generated from platforms/*.toml by `KVLINT_UPDATE_BOOK=1 cargo test --test platforms`; do not edit. -->\n\
         # Platforms\n\n\
         kvlint reads each platform below as its data file in `platforms/` describes it (see\n\
         `kvlint platforms NAME`). A site adds its own in `kvlint.toml` as a `[[platform]]` table in\n\
         the same schema. A file that holds an engine's options but matches no platform is still read\n\
         when its keys are mostly one engine's options, or said to be unread (INP006).\n\n",
    );
    for p in all {
        out.push_str(&format!("## {}\n\n", p.title));
        out.push_str(&format!("`{}` · engine: {}\n\n", p.name, engine(p)));
        out.push_str(&format!("{}\n\n", p.docs.what));
        out.push_str(&format!("**Settings.** {}\n\n", p.docs.settings));
        out.push_str(&format!("**Recognized by.** {}\n\n", recognition(p)));
        out.push_str(&format!("**Docs.** <{}>\n\n", p.docs.source));
        for e in &p.docs.examples {
            out.push_str(&format!("**Example.** <{e}>\n\n"));
        }
    }
    out
}

/// The README's table of platforms (between its `platforms` markers).
pub fn readme_table(all: &[Platform]) -> String {
    let mut out = String::from("| platform | engine | where the settings are |\n|---|---|---|\n");
    for p in all {
        let settings = p.docs.settings.replace('|', "\\|");
        out.push_str(&format!(
            "| [{}]({}) | {} | {} |\n",
            p.title,
            p.docs.source,
            engine(p),
            settings
        ));
    }
    out
}
