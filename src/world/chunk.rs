//! A chunk of the candidate pass: what one parallel task of the narrow
//! phase (`narrow_phase.rs`) writes, kept from step to step so that the
//! next step reuses its buffers, and its resting contacts
//! (`resting.rs`).

use crate::contact::Contact;

/// One parallel chunk's reused buffers: its contacts, each one's key
/// (`giver << 32 | partner key`: the store index of the moving frame whose
/// slot gave it, and its partner's key as in `apart.rs`), and the scratch
/// of its fixed partners' queries.
#[derive(Clone, Debug, Default)]
pub(super) struct Chunk<const D: usize> {
    pub contacts: Vec<Contact<D>>,
    pub keys: Vec<u64>,
    pub fixed: Vec<u32>,
    /// Contacts taken from the last step's (`resting.rs`), for tests.
    pub reused: usize,
}
