// musl's allocator is slow for the many small allocations of reading a large render (10,000
// objects: 0.35-0.41 s against 0.21-0.26 s with mimalloc); glibc builds keep the system allocator,
// where mimalloc saved little and doubled peak RSS.
#[cfg(target_env = "musl")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use kvlint::cli::{self, exit};

fn main() {
    std::panic::set_hook(Box::new(|info| {
        // `print!` panics when stdout fails. A reader that went away (`| head`) ends the run
        // quietly, as other tools do; any other write error (a full disk) is an input/output
        // error, exit 2.
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(cause) = message.strip_prefix("failed printing to stdout: ") {
            if cause.contains("Broken pipe") {
                std::process::exit(exit::CLEAN);
            }
            eprintln!("kvlint: cannot write to stdout: {cause}");
            std::process::exit(exit::USAGE);
        }
        // A bug must never show a raw panic: report it as an internal error (exit 3).
        eprintln!(
            "kvlint: internal error: {info}. Please report this with the input that caused it."
        );
    }));
    let code =
        std::panic::catch_unwind(|| cli::run_from(std::env::args_os())).unwrap_or(exit::INTERNAL);
    std::process::exit(code);
}
