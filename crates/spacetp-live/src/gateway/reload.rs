//! SIGHUP: a new configuration for a running gateway. What a running gateway can take is
//! applied (the shared link rate at once; the other SCPS-TP settings for connections opened
//! from now on; the keepalives of open ones, the drain and the duration); what it cannot
//! (addresses, rules, the MTU) is named as needing a restart, and the running value is kept.

use super::*;

/// What a reload did: the settings applied and those that need a restart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reload {
    pub applied: Vec<&'static str>,
    pub needs_restart: Vec<&'static str>,
}

impl Reload {
    /// One line for the log and the report.
    pub fn describe(&self) -> String {
        let list = |v: &[&str]| {
            if v.is_empty() {
                "nothing".into()
            } else {
                v.join(", ")
            }
        };
        let mut s = format!("applied {}", list(&self.applied));
        if !self.needs_restart.is_empty() {
            s += &format!(
                "; needs a restart (kept as running): {}",
                list(&self.needs_restart)
            );
        }
        s
    }
}

/// A setting a running gateway takes as it is: the new value, named if it changed.
fn take<T: PartialEq>(old: &mut T, new: T, name: &'static str, r: &mut Reload) {
    if *old != new {
        *old = new;
        r.applied.push(name);
    }
}

impl Gateway {
    /// Takes what can change live from `new`; the rest stays as running.
    pub fn reconfigure(&mut self, new: GatewayConfig) -> Reload {
        let mut r = Reload::default();
        let old = &mut self.cfg;
        // Settings compare by their debug form: TcpConfig has no PartialEq, and its Debug
        // shows every field.
        if format!("{:?}", old.tcp) != format!("{:?}", new.tcp) {
            old.tcp = new.tcp;
            // The shared link rate changes at once; each connection keeps its own settings.
            self.link_rate = link_bucket(&old.tcp);
            r.applied
                .push("tcp (link rate at once; the rest for connections opened from now on)");
        }
        take(&mut old.keepalive, new.keepalive, "keepalive", &mut r);
        take(
            &mut old.idle_timeout,
            new.idle_timeout,
            "idle_timeout",
            &mut r,
        );
        take(
            &mut old.log_events,
            new.log_events,
            "log_connections",
            &mut r,
        );
        take(
            &mut old.max_half_open,
            new.max_half_open,
            "max_half_open",
            &mut r,
        );
        take(&mut old.drain, new.drain, "drain", &mut r);
        take(&mut old.duration, new.duration, "duration", &mut r);
        let fixed: [(&'static str, bool); 7] = [
            ("mtu", old.mss != new.mss),
            ("local", old.local_ip != new.local_ip),
            ("peer", old.peer_ip != new.peer_ip),
            ("intercept", old.intercept != new.intercept),
            (
                "forward_original",
                old.forward_original != new.forward_original,
            ),
            ("listen", old.listen != new.listen),
            ("forward", old.forward != new.forward),
        ];
        r.needs_restart = fixed.iter().filter(|f| f.1).map(|f| f.0).collect();
        self.rep.reloads += 1;
        self.rep.last_reload = r.describe();
        r
    }

    /// A new configuration that could not be taken: the running one stays.
    pub fn note_reload_error(&mut self, why: &str) {
        self.rep.reloads += 1;
        self.rep.last_reload = format!("refused ({why}); kept the running settings");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixDatagram;

    fn cfg(extra: &str) -> GatewayConfig {
        config_from_json(&format!(
            r#"{{"local": "10.77.0.1", "peer": "10.77.0.2",
                "listen": [["127.0.0.1:0", 7000]] {extra}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn a_reload_applies_what_can_change_and_names_what_needs_a_restart() {
        let (link, _other) = UnixDatagram::pair().unwrap();
        let mut g = Gateway::new(cfg(""), link.as_raw_fd()).unwrap();
        let same = g.reconfigure(cfg(""));
        assert_eq!(same, Reload::default());
        let r = g.reconfigure(cfg(
            r#", "keepalive_s": 30, "drain_s": 5, "tcp": {"scps": {"rate": "2 Mb/s"}},
               "mtu": 1400"#,
        ));
        assert_eq!(
            r.applied,
            vec![
                "tcp (link rate at once; the rest for connections opened from now on)",
                "keepalive",
                "drain"
            ]
        );
        assert_eq!(r.needs_restart, vec!["mtu"]);
        assert_eq!(g.cfg.keepalive.idle, 30 * SEC);
        assert_eq!(g.cfg.drain, Some(5 * SEC));
        // The MTU stays as running, and the report says what happened.
        assert_eq!(g.cfg.mss, cfg("").mss);
        let rep = g.report();
        assert_eq!(rep.reloads, 2);
        assert!(rep
            .last_reload
            .contains("needs a restart (kept as running): mtu"));
    }
}
