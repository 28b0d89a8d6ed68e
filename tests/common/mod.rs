//! Helpers shared by the integration tests. Each test crate uses only part of
//! them, hence the blanket `dead_code` allowance.
#![allow(dead_code)]

pub mod brute;
