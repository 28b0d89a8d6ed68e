//! Buffers whose size the input decides grow fallibly: low memory is an
//! error the caller reports, never an abort.

/// Room for one more value in `v`: true at once when it has some, else
/// its capacity doubled (at least 64), fallibly: false when memory ran out.
#[inline(always)]
pub(crate) fn room_for_one<T>(v: &mut Vec<T>) -> bool {
    v.len() < v.capacity() || grow(v)
}

/// Room for `n` values in all in `v` (its length included), fallibly:
/// false when memory ran out. Grows as `Vec::try_reserve` does (at least
/// doubling), so that a buffer sized anew each step stops allocating.
#[inline]
pub(crate) fn room_for<T>(v: &mut Vec<T>, n: usize) -> bool {
    v.try_reserve(n.saturating_sub(v.len())).is_ok()
}

/// Memory ran out growing a buffer of about `bytes` bytes: what the
/// broad phase's fallible stages return, the world's
/// [`WorldError::OutOfMemory`](crate::WorldError::OutOfMemory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NoRoom {
    pub bytes: usize,
}

impl From<NoRoom> for crate::WorldError {
    fn from(e: NoRoom) -> Self {
        crate::WorldError::OutOfMemory { bytes: e.bytes }
    }
}

/// [`room_for`] as a `Result`, for `?`.
#[inline]
pub(crate) fn room<T>(v: &mut Vec<T>, n: usize) -> Result<(), NoRoom> {
    if room_for(v, n) { Ok(()) } else { Err(NoRoom { bytes: n.saturating_mul(size_of::<T>()) }) }
}

/// Clears `v` and makes room for exactly `n` values (no doubling slack:
/// a buffer sized by the frames, once), fallibly.
#[inline]
pub(crate) fn room_exact<T>(v: &mut Vec<T>, n: usize) -> Result<(), NoRoom> {
    v.clear();
    v.try_reserve_exact(n).map_err(|_| NoRoom { bytes: n.saturating_mul(size_of::<T>()) })
}

/// `v` made `n` long: `n` copies of `x` when its length was another
/// (reserving exactly), else left as it is (the caller writes every
/// entry), fallibly.
#[inline]
pub(crate) fn fit<T: Clone>(v: &mut Vec<T>, n: usize, x: T) -> Result<(), NoRoom> {
    if v.len() != n {
        room_exact(v, n)?;
        v.resize(n, x);
    }
    Ok(())
}

/// `v` cleared and filled with `n` copies of `x`, fallibly (growing as
/// [`room_for`] does).
#[inline]
pub(crate) fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) -> Result<(), NoRoom> {
    v.clear();
    room(v, n)?;
    v.resize(n, x);
    Ok(())
}

/// The rare half of [`room_for_one`], out of the hot loops.
#[cold]
fn grow<T>(v: &mut Vec<T>) -> bool {
    v.try_reserve(v.len().max(64)).is_ok()
}

/// A byte count as people read it: "12 KB", "3.4 MB", "1.2 GB".
pub(crate) fn size_text(bytes: usize) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.0} KB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b / 1e6),
        _ => format!("{:.1} GB", b / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(size_text(12), "12 bytes");
        assert_eq!(size_text(12_345), "12 KB");
        assert_eq!(size_text(3_456_789), "3.5 MB");
        assert_eq!(size_text(1_234_567_890), "1.2 GB");
    }

    #[test]
    fn room_doubles_then_is_reused() {
        let mut v: Vec<u32> = Vec::new();
        assert!(room_for_one(&mut v));
        assert!(v.capacity() >= 64);
        let cap = v.capacity();
        v.extend(0..cap as u32);
        assert!(room_for_one(&mut v));
        assert!(v.capacity() >= 2 * cap);
    }

    #[test]
    fn room_for_counts_the_length() {
        let mut v: Vec<u8> = vec![1; 10];
        assert!(room_for(&mut v, 4));
        assert!(v.capacity() >= 10);
        assert!(room_for(&mut v, 100));
        assert!(v.capacity() >= 100);
        assert!(!room_for(&mut v, usize::MAX));
        assert_eq!(v, vec![1; 10]);
    }
}
