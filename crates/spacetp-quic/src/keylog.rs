//! The TLS secrets of every QUIC connection of a run, written to one file in the NSS key log
//! format (`SSLKEYLOGFILE`), so that Wireshark and tshark decrypt the pcaps
//! (`tshark -o tls.keylog_file:KEYS.txt`). Only clients log: one line per secret and
//! connection, keyed by the ClientHello's random.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Arc, Mutex};

#[derive(Debug)]
pub struct KeyLogFile {
    out: Mutex<BufWriter<File>>,
}

impl KeyLogFile {
    /// Create (or truncate) `path`; the error says why it cannot be written.
    pub fn create(path: &str) -> Result<Arc<KeyLogFile>, String> {
        let f = File::create(path).map_err(|e| format!("cannot create the file: {e}"))?;
        Ok(Arc::new(KeyLogFile {
            out: Mutex::new(BufWriter::new(f)),
        }))
    }

    /// Write out what is buffered (the run's end).
    pub fn flush(&self) -> std::io::Result<()> {
        self.out.lock().map_or(Ok(()), |mut o| o.flush())
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl rustls::KeyLog for KeyLogFile {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        if let Ok(mut o) = self.out.lock() {
            // A write error shows as a key log tshark cannot use; the run itself goes on.
            let _ = writeln!(o, "{label} {} {}", hex(client_random), hex(secret));
        }
    }

    fn will_log(&self, _label: &str) -> bool {
        true
    }
}

impl Drop for KeyLogFile {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}
