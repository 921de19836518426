use kvlint::cli::{self, exit};

fn main() {
    // A bug must never show a raw panic: report it as an internal error (exit 3).
    std::panic::set_hook(Box::new(|info| {
        eprintln!(
            "kvlint: internal error: {info}. Please report this with the input that caused it."
        );
    }));
    let code =
        std::panic::catch_unwind(|| cli::run_from(std::env::args_os())).unwrap_or(exit::INTERNAL);
    std::process::exit(code);
}
