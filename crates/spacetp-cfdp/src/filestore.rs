//! Files of any size that are never held in memory: a source file's byte at offset `i` is
//! [`content`]`(i)`; a destination file keeps which ranges were written and whether every
//! byte written matched the source's. Its checksum is computed over what it holds (the
//! source's bytes where written, zeros elsewhere), so a lost or corrupted segment fails
//! the transfer's check exactly as it would on disk.

use cfdp::filestore::{FilestoreError, VirtualFilestore};
use spacepackets::cfdp::ChecksumType;
use spacetp_proto::ranges;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The source files' content: a byte of offset `i` (no period shorter than 2^32 bytes, so
/// a segment written at the wrong offset does not match).
pub fn content(i: u64) -> u8 {
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 56) as u8 ^ (i >> 32) as u8
}

#[derive(Debug, Default)]
struct File {
    /// A source file's size; None for a file being received.
    source_size: Option<u64>,
    written: Vec<(u64, u64)>,
    /// A byte written that differs from the source's.
    corrupted: bool,
}

impl File {
    fn size(&self) -> u64 {
        self.source_size
            .unwrap_or_else(|| self.written.last().map_or(0, |r| r.1))
    }

    /// The byte at `i` as the file holds it.
    fn byte(&self, i: u64) -> u8 {
        if self.source_size.is_some() {
            return content(i);
        }
        let k = self.written.partition_point(|r| r.1 <= i);
        let held = self.written.get(k).is_some_and(|r| r.0 <= i);
        if held && !self.corrupted {
            content(i)
        } else if held {
            // What a corrupted file holds is not the source's: its checksum must differ.
            !content(i)
        } else {
            0
        }
    }
}

/// The files of one CFDP entity (shared with the caller, who adds sources and reads what
/// arrived).
#[derive(Clone, Debug, Default)]
pub struct Files(Arc<Mutex<HashMap<String, File>>>);

impl Files {
    /// A source file of `size` bytes at `path`.
    pub fn add_source(&self, path: &str, size: u64) {
        let f = File {
            source_size: Some(size),
            ..Default::default()
        };
        self.0.lock().expect("files").insert(path.into(), f);
    }

    /// Bytes of `path` held, and whether every one matched the source's.
    pub fn received(&self, path: &str) -> Option<(u64, bool)> {
        let files = self.0.lock().expect("files");
        let f = files.get(path)?;
        let held = f.written.iter().map(|r| r.1 - r.0).sum();
        Some((held, !f.corrupted))
    }

    /// Bytes of `path` held from its start without a gap (a Keep Alive's progress).
    pub fn prefix(&self, path: &str) -> u64 {
        let files = self.0.lock().expect("files");
        files
            .get(path)
            .and_then(|f| f.written.first())
            .filter(|r| r.0 == 0)
            .map_or(0, |r| r.1)
    }

    fn with<T>(&self, path: &str, f: impl FnOnce(&mut File) -> T) -> Result<T, FilestoreError> {
        let mut files = self.0.lock().expect("files");
        files
            .get_mut(path)
            .map(f)
            .ok_or(FilestoreError::FileDoesNotExist)
    }
}

impl VirtualFilestore for Files {
    fn create_file(&self, path: &str) -> Result<(), FilestoreError> {
        let mut files = self.0.lock().expect("files");
        if files.contains_key(path) {
            return Err(FilestoreError::FileAlreadyExists);
        }
        files.insert(path.into(), File::default());
        Ok(())
    }

    fn remove_file(&self, path: &str) -> Result<(), FilestoreError> {
        let mut files = self.0.lock().expect("files");
        files
            .remove(path)
            .map(|_| ())
            .ok_or(FilestoreError::FileDoesNotExist)
    }

    fn truncate_file(&self, path: &str) -> Result<(), FilestoreError> {
        self.with(path, |f| *f = File::default())
    }

    fn remove_dir(&self, _dir: &str, _all: bool) -> Result<(), FilestoreError> {
        Err(FilestoreError::IsNotDirectory)
    }

    fn create_dir(&self, _dir: &str) -> Result<(), FilestoreError> {
        Ok(())
    }

    fn read_data(
        &self,
        path: &str,
        offset: u64,
        len: u64,
        buf: &mut [u8],
    ) -> Result<(), FilestoreError> {
        self.with(path, |f| {
            for (k, b) in buf.iter_mut().take(len as usize).enumerate() {
                *b = f.byte(offset + k as u64);
            }
        })
    }

    fn write_data(&self, path: &str, offset: u64, buf: &[u8]) -> Result<(), FilestoreError> {
        self.with(path, |f| {
            let end = offset + buf.len() as u64;
            if buf.iter().zip(offset..end).any(|(&b, i)| b != content(i)) {
                f.corrupted = true;
            }
            ranges::insert(&mut f.written, offset, end);
        })
    }

    fn filename_from_full_path(path: &str) -> Option<&str>
    where
        Self: Sized,
    {
        path.rsplit('/').next()
    }

    fn is_file(&self, path: &str) -> Result<bool, FilestoreError> {
        Ok(self.0.lock().expect("files").contains_key(path))
    }

    fn is_dir(&self, _path: &str) -> Result<bool, FilestoreError> {
        Ok(false)
    }

    fn exists(&self, path: &str) -> Result<bool, FilestoreError> {
        self.is_file(path)
    }

    fn file_name<'a>(&self, full_path: &'a str) -> Result<Option<&'a str>, FilestoreError> {
        Ok(full_path.rsplit('/').next())
    }

    fn file_size(&self, path: &str) -> Result<u64, FilestoreError> {
        self.with(path, |f| f.size())
    }

    fn calculate_checksum(
        &self,
        path: &str,
        kind: ChecksumType,
        size: u64,
        _buf: &mut [u8],
    ) -> Result<u32, FilestoreError> {
        let files = self.0.lock().expect("files");
        let f = files.get(path).ok_or(FilestoreError::FileDoesNotExist)?;
        let bytes = (0..size).map(|i| f.byte(i));
        match kind {
            ChecksumType::Modular => Ok(modular(bytes)),
            ChecksumType::Crc32 => Ok(crc(cfdp::CRC_32, bytes)),
            ChecksumType::Crc32C => Ok(crc(cfdp::CRC_32C, bytes)),
            ChecksumType::NullChecksum => Ok(0),
            other => Err(FilestoreError::ChecksumTypeNotImplemented(other)),
        }
    }
}

/// CFDP's modular checksum (727.0-B-5 4.2.2.2): the sum, modulo 2^32, of the file as
/// big-endian 32-bit words aligned to offset 0, the last one padded with zeros.
pub fn modular(bytes: impl Iterator<Item = u8>) -> u32 {
    let (mut sum, mut word, mut n) = (0u32, 0u32, 0);
    for b in bytes {
        word = word << 8 | b as u32;
        n += 1;
        if n == 4 {
            sum = sum.wrapping_add(word);
            (word, n) = (0, 0);
        }
    }
    if n > 0 {
        sum = sum.wrapping_add(word << (8 * (4 - n)));
    }
    sum
}

fn crc(c: crc::Crc<u32>, bytes: impl Iterator<Item = u8>) -> u32 {
    let mut d = c.digest();
    let mut chunk = [0u8; 4096];
    let mut n = 0;
    for b in bytes {
        chunk[n] = b;
        n += 1;
        if n == chunk.len() {
            d.update(&chunk);
            n = 0;
        }
    }
    d.update(&chunk[..n]);
    d.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modular_checksum_sums_big_endian_words_padding_the_last() {
        // 727.0-B-5 4.2.2.2: words aligned to offset 0; a short tail padded with zeros.
        assert_eq!(modular([0, 0, 0, 1, 0, 0, 0, 2].into_iter()), 3);
        assert_eq!(
            modular([1, 2, 3, 4, 5].into_iter()),
            0x0102_0304 + 0x0500_0000
        );
    }

    #[test]
    fn a_received_file_checks_only_when_every_byte_arrived_unchanged() {
        let (src, dst) = (Files::default(), Files::default());
        src.add_source("/a", 10_000);
        let mut buf = vec![0u8; 10_000];
        src.read_data("/a", 0, 10_000, &mut buf).unwrap();
        let want = src
            .calculate_checksum("/a", ChecksumType::Crc32, 10_000, &mut [])
            .unwrap();
        assert_eq!(
            want,
            cfdp::CRC_32.checksum(&buf),
            "the source's bytes, checksummed"
        );
        dst.create_file("/b").unwrap();
        dst.write_data("/b", 0, &buf[..6_000]).unwrap();
        let partial = dst
            .calculate_checksum("/b", ChecksumType::Crc32, 10_000, &mut [])
            .unwrap();
        assert_ne!(partial, want, "a hole is zeros");
        dst.write_data("/b", 6_000, &buf[6_000..]).unwrap();
        let whole = dst
            .calculate_checksum("/b", ChecksumType::Crc32, 10_000, &mut [])
            .unwrap();
        assert_eq!(whole, want);
        assert_eq!(dst.received("/b"), Some((10_000, true)));
        let mut bad = buf[..100].to_vec();
        bad[7] ^= 1;
        dst.write_data("/b", 0, &bad).unwrap();
        let spoiled = dst
            .calculate_checksum("/b", ChecksumType::Crc32, 10_000, &mut [])
            .unwrap();
        assert_ne!(spoiled, want, "a corrupted byte fails the check");
    }
}
