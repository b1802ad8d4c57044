//! Output: JSON lines for records, terminal tables, number formatting.

pub mod json;
pub mod num;
pub mod records;
pub mod server;
