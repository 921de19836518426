//! Units of memory, shared by the plans that compute in them and the reports that print them.

/// Bytes in a GiB (2^30), as the engines log memory.
pub const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
/// Bytes in a MiB (2^20).
pub const MIB: f64 = 1024.0 * 1024.0;
