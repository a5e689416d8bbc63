//! Progress bars on stderr for loading and measuring, drawn only when
//! stderr is a terminal (so `--json` piped into a file, CI logs and tests
//! see nothing of them).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Whether bars are drawn at all.
fn visible() -> bool {
    std::io::stderr().is_terminal()
}

fn target() -> ProgressDrawTarget {
    if visible() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A bar over `total` measured points, `prefix` naming the workload.
pub fn points(total: u64, prefix: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), target());
    let style = ProgressStyle::with_template(
        "{prefix:>4} [{elapsed_precise}] {bar:24.cyan/blue} {pos}/{len} points  {wide_msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.set_prefix(prefix.to_owned());
    bar
}

/// A spinner for a step of unknown length (loading a data set); finish it
/// with `finish_and_clear`.
pub fn spinner(prefix: &str, message: String) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, target());
    let style = ProgressStyle::with_template("{prefix:>4} [{elapsed_precise}] {spinner} {wide_msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.set_prefix(prefix.to_owned());
    bar.set_message(message);
    if visible() {
        bar.enable_steady_tick(Duration::from_millis(120));
    }
    bar
}

/// Redraws `bar` on a timer (when it is drawn at all), so its clock moves
/// during long steps such as loading.
pub fn tick(bar: &ProgressBar) {
    if visible() {
        bar.enable_steady_tick(Duration::from_millis(200));
    }
}
