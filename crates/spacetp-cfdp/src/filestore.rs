//! Files of any size that are never held in memory: a source file's byte at offset `i` is
//! [`content`]`(i)`; a destination file keeps which ranges were written and whether every
//! byte written matched the source's. Its checksum is computed over what it holds (the
//! source's bytes where written, zeros elsewhere), so a lost or corrupted segment fails
//! the transfer's check exactly as it would on disk.
//!
//! A live entity's files are on disk instead: a source read from its path, and files
//! received written into a directory (as `NAME.part` until the caller renames them whole).

use cfdp::filestore::{FilestoreError, VirtualFilestore};
use spacepackets::cfdp::ChecksumType;
use spacetp_proto::ranges;
use std::collections::HashMap;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
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
    /// Where the bytes are, for a file on disk.
    disk: Option<(std::fs::File, PathBuf)>,
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

#[derive(Debug, Default)]
struct Store {
    files: HashMap<String, File>,
    /// Where files received are written (a live entity's); None: in memory.
    dir: Option<PathBuf>,
}

/// The files of one CFDP entity (shared with the caller, who adds sources and reads what
/// arrived).
#[derive(Clone, Debug, Default)]
pub struct Files(Arc<Mutex<Store>>);

fn disk_error(e: std::io::Error) -> FilestoreError {
    FilestoreError::Io(e)
}

impl Files {
    /// Files received are written in `dir`, each as `NAME.part` under the last component of
    /// the name the sender gave it.
    pub fn in_dir(dir: &Path) -> Files {
        let f = Files::default();
        f.0.lock().expect("files").dir = Some(dir.to_path_buf());
        f
    }

    /// The file on disk at `real` is sent under the name `path`; returns its size.
    pub fn add_disk_source(&self, path: &str, real: &Path) -> std::io::Result<u64> {
        let file = std::fs::File::open(real)?;
        let size = file.metadata()?.len();
        let f = File {
            source_size: Some(size),
            disk: Some((file, real.to_path_buf())),
            ..Default::default()
        };
        self.0.lock().expect("files").files.insert(path.into(), f);
        Ok(size)
    }

    /// Where a file received under `path` is on disk.
    pub fn disk_path(&self, path: &str) -> Option<PathBuf> {
        let s = self.0.lock().expect("files");
        s.files.get(path)?.disk.as_ref().map(|d| d.1.clone())
    }

    /// A source file of `size` bytes at `path`.
    pub fn add_source(&self, path: &str, size: u64) {
        let f = File {
            source_size: Some(size),
            ..Default::default()
        };
        self.0.lock().expect("files").files.insert(path.into(), f);
    }

    /// Bytes of `path` held, and whether every one matched the source's.
    pub fn received(&self, path: &str) -> Option<(u64, bool)> {
        let store = self.0.lock().expect("files");
        let f = store.files.get(path)?;
        let held = f.written.iter().map(|r| r.1 - r.0).sum();
        Some((held, !f.corrupted))
    }

    /// Bytes of `path` held from its start without a gap (a Keep Alive's progress).
    pub fn prefix(&self, path: &str) -> u64 {
        let store = self.0.lock().expect("files");
        store
            .files
            .get(path)
            .and_then(|f| f.written.first())
            .filter(|r| r.0 == 0)
            .map_or(0, |r| r.1)
    }

    fn with<T>(&self, path: &str, f: impl FnOnce(&mut File) -> T) -> Result<T, FilestoreError> {
        let mut store = self.0.lock().expect("files");
        store
            .files
            .get_mut(path)
            .map(f)
            .ok_or(FilestoreError::FileDoesNotExist)
    }
}

impl VirtualFilestore for Files {
    fn create_file(&self, path: &str) -> Result<(), FilestoreError> {
        let mut store = self.0.lock().expect("files");
        if store.files.contains_key(path) {
            return Err(FilestoreError::FileAlreadyExists);
        }
        let mut f = File::default();
        if let Some(dir) = &store.dir {
            // Only the name's last component: a sender names no place outside `dir`.
            let name = path
                .rsplit('/')
                .next()
                .filter(|n| !n.is_empty() && *n != "..");
            let name = name.ok_or(FilestoreError::FileDoesNotExist)?;
            let real = dir.join(format!("{name}.part"));
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&real)
                .map_err(disk_error)?;
            f.disk = Some((file, real));
        }
        store.files.insert(path.into(), f);
        Ok(())
    }

    fn remove_file(&self, path: &str) -> Result<(), FilestoreError> {
        let mut store = self.0.lock().expect("files");
        let f = store
            .files
            .remove(path)
            .ok_or(FilestoreError::FileDoesNotExist)?;
        if let Some((_, real)) = f.disk.filter(|_| f.source_size.is_none()) {
            std::fs::remove_file(real).map_err(disk_error)?;
        }
        Ok(())
    }

    fn truncate_file(&self, path: &str) -> Result<(), FilestoreError> {
        self.with(path, |f| {
            if let Some((file, _)) = &f.disk {
                file.set_len(0).map_err(disk_error)?;
            }
            f.written.clear();
            f.corrupted = false;
            Ok(())
        })?
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
        let n = (len as usize).min(buf.len());
        let buf = &mut buf[..n];
        self.with(path, |f| match &f.disk {
            Some((file, _)) => file.read_exact_at(buf, offset).map_err(disk_error),
            None => {
                for (k, b) in buf.iter_mut().enumerate() {
                    *b = f.byte(offset + k as u64);
                }
                Ok(())
            }
        })?
    }

    fn write_data(&self, path: &str, offset: u64, buf: &[u8]) -> Result<(), FilestoreError> {
        self.with(path, |f| {
            let end = offset + buf.len() as u64;
            match &f.disk {
                Some((file, _)) => file.write_all_at(buf, offset).map_err(disk_error)?,
                // In memory, every byte is checked against the source's.
                None if buf.iter().zip(offset..end).any(|(&b, i)| b != content(i)) => {
                    f.corrupted = true
                }
                None => {}
            }
            ranges::insert(&mut f.written, offset, end);
            Ok(())
        })?
    }

    fn filename_from_full_path(path: &str) -> Option<&str>
    where
        Self: Sized,
    {
        path.rsplit('/').next()
    }

    fn is_file(&self, path: &str) -> Result<bool, FilestoreError> {
        Ok(self.0.lock().expect("files").files.contains_key(path))
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
        let store = self.0.lock().expect("files");
        let f = store
            .files
            .get(path)
            .ok_or(FilestoreError::FileDoesNotExist)?;
        let crc = |c: crc::Crc<u32>| {
            let mut d = c.digest();
            f.each_chunk(size, |b| d.update(b));
            d.finalize()
        };
        match kind {
            ChecksumType::Modular => {
                let mut m = Modular::default();
                f.each_chunk(size, |b| m.update(b));
                Ok(m.finish())
            }
            ChecksumType::Crc32 => Ok(crc(cfdp::CRC_32)),
            ChecksumType::Crc32C => Ok(crc(cfdp::CRC_32C)),
            ChecksumType::NullChecksum => Ok(0),
            other => Err(FilestoreError::ChecksumTypeNotImplemented(other)),
        }
    }
}

/// Checksums are computed over chunks of this many bytes (a file is never held whole).
const CHUNK: usize = 1 << 16;

impl File {
    /// Bytes `at..at + buf.len()` as the file holds them (as [`File::byte`] reads them,
    /// or from disk: zeros past its end, as a hole reads), into `buf`.
    fn fill(&self, at: u64, buf: &mut [u8]) {
        if let Some((file, _)) = &self.disk {
            buf.fill(0);
            let mut got = 0;
            while got < buf.len() {
                match file.read_at(&mut buf[got..], at + got as u64) {
                    Ok(0) | Err(_) => break, // past the end: zeros
                    Ok(r) => got += r,
                }
            }
        } else if self.source_size.is_some() {
            for (i, b) in (at..).zip(buf.iter_mut()) {
                *b = content(i);
            }
        } else {
            buf.fill(0);
            let end = at + buf.len() as u64;
            let first = self.written.partition_point(|r| r.1 <= at);
            for &(lo, hi) in self.written[first..].iter().take_while(|r| r.0 < end) {
                for i in lo.max(at)..hi.min(end) {
                    let b = content(i);
                    // What a corrupted file holds is not the source's: its checksum differs.
                    buf[(i - at) as usize] = if self.corrupted { !b } else { b };
                }
            }
        }
    }

    /// The first `size` bytes as the file holds them, chunk by chunk, to `sink`.
    fn each_chunk(&self, size: u64, mut sink: impl FnMut(&[u8])) {
        let mut buf = vec![0u8; CHUNK.min(size as usize)];
        let mut at = 0;
        while at < size {
            let n = (size - at).min(CHUNK as u64) as usize;
            self.fill(at, &mut buf[..n]);
            sink(&buf[..n]);
            at += n as u64;
        }
    }
}

/// CFDP's modular checksum (727.0-B-5 4.2.2.2): the sum, modulo 2^32, of the file as
/// big-endian 32-bit words aligned to offset 0, the last one padded with zeros; fed in
/// pieces of any length.
#[derive(Default)]
struct Modular {
    sum: u32,
    /// The word being filled and its bytes so far (a piece ended inside it).
    word: u32,
    n: u32,
}

impl Modular {
    fn update(&mut self, mut bytes: &[u8]) {
        while self.n != 0 && !bytes.is_empty() {
            self.push(bytes[0]);
            bytes = &bytes[1..];
        }
        let words = bytes.chunks_exact(4);
        // The bytes after the whole words start the next word.
        let tail = words.remainder();
        for w in words {
            let w = u32::from_be_bytes(w.try_into().expect("4 bytes"));
            self.sum = self.sum.wrapping_add(w);
        }
        for &b in tail {
            self.push(b);
        }
    }

    fn push(&mut self, b: u8) {
        self.word = self.word << 8 | b as u32;
        self.n += 1;
        if self.n == 4 {
            self.sum = self.sum.wrapping_add(self.word);
            (self.word, self.n) = (0, 0);
        }
    }

    fn finish(self) -> u32 {
        if self.n > 0 {
            return self.sum.wrapping_add(self.word << (8 * (4 - self.n)));
        }
        self.sum
    }
}

/// The modular checksum of `bytes` (see [`Modular`]).
pub fn modular(bytes: &[u8]) -> u32 {
    let mut m = Modular::default();
    m.update(bytes);
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modular_checksum_sums_big_endian_words_padding_the_last() {
        // 727.0-B-5 4.2.2.2: words aligned to offset 0; a short tail padded with zeros.
        assert_eq!(modular(&[0, 0, 0, 1, 0, 0, 0, 2]), 3);
        assert_eq!(modular(&[1, 2, 3, 4, 5]), 0x0102_0304 + 0x0500_0000);
    }

    #[test]
    fn the_modular_checksum_is_the_same_fed_in_pieces_of_any_length() {
        let bytes: Vec<u8> = (0..1001u64).map(content).collect();
        let whole = modular(&bytes);
        // Word by word, as the standard's sum reads it.
        let padded: Vec<u8> = bytes.iter().copied().chain([0, 0, 0]).collect();
        let by_words = padded.chunks_exact(4).fold(0u32, |s, w| {
            s.wrapping_add(u32::from_be_bytes(w.try_into().unwrap()))
        });
        assert_eq!(whole, by_words);
        for cuts in [[1, 2, 3], [3, 5, 998], [4, 8, 1000], [0, 7, 7]] {
            let mut m = Modular::default();
            let mut at = 0;
            for c in cuts.into_iter().chain([1001]) {
                m.update(&bytes[at..c]);
                at = c;
            }
            assert_eq!(m.finish(), whole, "cut at {cuts:?}");
        }
    }

    #[test]
    fn a_files_chunks_hold_what_each_of_its_bytes_reads() {
        let dst = Files::default();
        dst.create_file("/b").unwrap();
        let part = |a: u64, b: u64| (a..b).map(content).collect::<Vec<u8>>();
        dst.write_data("/b", 3, &part(3, 70_000)).unwrap();
        dst.write_data("/b", 70_010, &part(70_010, 140_000))
            .unwrap();
        dst.write_data("/b", 140_001, &part(140_001, 140_002))
            .unwrap();
        for corrupt in [false, true] {
            if corrupt {
                dst.write_data("/b", 5, &[!content(5)]).unwrap();
            }
            let store = dst.0.lock().unwrap();
            let f = &store.files["/b"];
            assert_eq!(f.corrupted, corrupt);
            for (at, len) in [(0, 140_010), (69_990, 30), (140_000, 2), (5, 1)] {
                let mut buf = vec![7u8; len];
                f.fill(at, &mut buf);
                let each: Vec<u8> = (at..at + len as u64).map(|i| f.byte(i)).collect();
                assert_eq!(buf, each, "{len} bytes from {at}, corrupted {corrupt}");
            }
        }
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

    #[test]
    fn a_file_on_disk_is_received_as_part_with_the_checksum_of_what_it_holds() {
        let dir = std::env::temp_dir().join(format!("spacetp-fs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data: Vec<u8> = (0..70_001u32).map(|i| (i * 7 % 251) as u8).collect();
        let real = dir.join("src.bin");
        std::fs::write(&real, &data).unwrap();
        let (src, dst) = (Files::default(), Files::in_dir(&dir));
        assert_eq!(src.add_disk_source("/any/name", &real).unwrap(), 70_001);
        let want = cfdp::CRC_32.checksum(&data);
        let got = src.calculate_checksum("/any/name", ChecksumType::Crc32, 70_001, &mut []);
        assert_eq!(got.unwrap(), want);
        // A name from the sender keeps only its last component, inside `dir`.
        dst.create_file("../../etc/copy.bin").unwrap();
        let part = dst.disk_path("../../etc/copy.bin").unwrap();
        assert_eq!(part, dir.join("copy.bin.part"));
        let mut buf = vec![0u8; 70_001];
        src.read_data("/any/name", 0, 70_001, &mut buf).unwrap();
        dst.write_data("../../etc/copy.bin", 40_000, &buf[40_000..])
            .unwrap();
        let partial =
            dst.calculate_checksum("../../etc/copy.bin", ChecksumType::Crc32, 70_001, &mut []);
        assert_ne!(partial.unwrap(), want, "the hole reads as zeros");
        dst.write_data("../../etc/copy.bin", 0, &buf[..40_000])
            .unwrap();
        let whole =
            dst.calculate_checksum("../../etc/copy.bin", ChecksumType::Modular, 70_001, &mut []);
        assert_eq!(whole.unwrap(), modular(&data));
        assert_eq!(std::fs::read(&part).unwrap(), data);
        dst.remove_file("../../etc/copy.bin").unwrap();
        assert!(!part.exists(), "a discarded file leaves nothing");
        assert!(real.exists(), "a source is never removed");
        std::fs::remove_dir_all(&dir).ok();
    }
}
