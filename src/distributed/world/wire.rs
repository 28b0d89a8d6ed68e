//! Contacts and error messages as the words the ranks exchange.

use super::*;

/// A contact from its words: the two frames (body, index), the box's
/// corners and the interval, as `f64` bits.
pub(super) fn contact_from_words<const D: usize>(c: &[u64]) -> GlobalContact<D> {
    let f = |k: usize| f64::from_bits(c[k]);
    GlobalContact {
        a: GlobalFrame { body: GlobalHandle(c[0]), index: c[1] as u32 },
        b: GlobalFrame { body: GlobalHandle(c[2]), index: c[3] as u32 },
        aabb: Aabb { min: std::array::from_fn(|k| f(4 + k)), max: std::array::from_fn(|k| f(4 + D + k)) },
        time: [f(4 + 2 * D), f(5 + 2 * D)],
    }
}

/// A text as words (its bytes), to share with every rank.
pub(super) fn text_words(text: &str) -> Vec<u64> {
    text.as_bytes().chunks(8).map(|c| c.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b))).collect()
}

/// A text back from its words.
pub(super) fn text_from_words(words: &[u64]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).filter(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
