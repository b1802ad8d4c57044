//! A running job, while it runs: `pulse` measures it over a window, `watch` follows it look
//! after look. Both read the inputs as they stand and then what each look appended, like any
//! input; the reading is the report's, only the windowing is here.
//!
//! - [`pulse`]: the window's client and server rates, their gap, and the ETA with its band.
//! - [`watch`]: the running totals across looks, and the same ETA.
//! - [`follow`]: which inputs grew, were replaced or appeared between two looks.
//! - [`window`]: what a file appended since a mark, read apart from what came before.
//! - [`scrape`]: a live Prometheus endpoint scraped at each look.
//! - [`prometheus`]: the server's side read from a Prometheus server instead.
//! - [`memory`]: what a look freed, handed back before the next.

pub mod follow;
pub mod memory;
pub mod prometheus;
pub mod pulse;
pub mod scrape;
pub mod watch;
pub mod window;
