pub mod num;
pub mod prefix;
pub mod stamp;
