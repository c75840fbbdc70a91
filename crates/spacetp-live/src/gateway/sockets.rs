//! Kernel sockets as the gateway needs them: non-blocking, transparent, reset on close
//! unless the relay completed.

use super::*;
use crate::error::LiveError;

/// Reset-on-close (SO_LINGER on, 0 s): closing the socket sends an RST, not a FIN.
///
/// Every relayed socket is armed so from the moment it exists (listeners too: an accepted
/// socket inherits it), because the kernel closes a dead process's sockets: however the
/// gateway ends (SIGKILL, the OOM killer, a panic, abort) the end host is then reset, never
/// sent a FIN that its application would read as a complete stream. Only a relay that
/// completed both ways disarms it, in [`close_gracefully`].
pub(crate) fn reset_on_close(s: &impl AsRawFd) {
    set_linger(s.as_raw_fd(), true);
}

/// Close a relayed socket whose relay completed both ways: with SO_LINGER off the kernel
/// sends what the socket still holds, then the FIN (the close goes on after the process).
pub(crate) fn close_gracefully(s: TcpStream) {
    set_linger(s.as_raw_fd(), false);
}

fn set_linger(fd: RawFd, reset: bool) {
    let l = libc::linger {
        l_onoff: reset as libc::c_int,
        l_linger: 0,
    };
    set_opt(fd, libc::SOL_SOCKET, libc::SO_LINGER, &l).ok();
}

/// setsockopt(2) with a value of type `T`.
pub(super) fn set_opt<T>(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: &T,
) -> std::io::Result<()> {
    // SAFETY: setsockopt reads size_of::<T>() bytes of a value we own.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A new non-blocking, close-on-exec TCP socket of `a`'s family.
pub(super) fn tcp_socket(a: &SocketAddr) -> std::io::Result<OwnedFd> {
    let family = if a.is_ipv6() {
        libc::AF_INET6
    } else {
        libc::AF_INET
    };
    // SAFETY: socket(2) returns a new fd that we wrap (and so own) at once.
    let fd = unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh socket nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// bind(2) or connect(2) (`call`) socket `fd` to `a`.
pub(super) fn to_addr(
    fd: RawFd,
    a: SocketAddr,
    call: unsafe extern "C" fn(libc::c_int, *const libc::sockaddr, libc::socklen_t) -> libc::c_int,
) -> std::io::Result<()> {
    // SAFETY (both arms): the call reads a sockaddr we own, of the size we pass.
    let r = match a {
        SocketAddr::V4(a) => {
            let sa = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            unsafe { call(fd, &sa as *const _ as *const libc::sockaddr, len) }
        }
        SocketAddr::V6(a) => {
            let sa = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            let len = std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t;
            unsafe { call(fd, &sa as *const _ as *const libc::sockaddr, len) }
        }
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A listening socket of an explicit rule at `addr`: non-blocking, reset on close, with a
/// deep backlog (std listens with 128: thousands of clients connecting at once would
/// overflow it and be reset; listening again raises it, capped by somaxconn).
pub(crate) fn explicit_listener(addr: SocketAddr) -> Result<TcpListener, LiveError> {
    let err = |what: &str, e| LiveError::os(format!("listen {addr}{what}"), e);
    let l = TcpListener::bind(addr).map_err(|e| err("", e))?;
    l.set_nonblocking(true)
        .map_err(|e| err(": non-blocking", e))?;
    // SAFETY: listen on a socket we own.
    unsafe { libc::listen(l.as_raw_fd(), LISTEN_BACKLOG) };
    reset_on_close(&l);
    Ok(l)
}

/// The addresses `listeners` are bound to, in their order: a rule's port 0 is the kernel's
/// choice, and this is where a script learns it (the readiness line says them).
pub(crate) fn bound_addresses<T>(listeners: &[(TcpListener, T)]) -> Vec<String> {
    listeners
        .iter()
        .filter_map(|(l, _)| l.local_addr().ok())
        .map(|a| a.to_string())
        .collect()
}

/// A listening socket with IP_TRANSPARENT set before bind, so it accepts connections that
/// nftables `tproxy` redirects to it; each accepted socket's local address is the original
/// destination. Needs CAP_NET_ADMIN.
pub(crate) fn transparent_listener(at: SocketAddr) -> Result<TcpListener, LiveError> {
    let err = |what: &str, e: std::io::Error| LiveError::os(format!("intercept {at}: {what}"), e);
    let fd = tcp_socket(&at).map_err(|e| err("socket", e))?;
    let one: libc::c_int = 1;
    set_opt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, &one)
        .map_err(|e| err("SO_REUSEADDR", e))?;
    let (level, opt) = if at.is_ipv6() {
        (libc::SOL_IPV6, libc::IPV6_TRANSPARENT)
    } else {
        (libc::SOL_IP, libc::IP_TRANSPARENT)
    };
    set_opt(fd.as_raw_fd(), level, opt, &one)
        .map_err(|e| err("IP_TRANSPARENT (needs CAP_NET_ADMIN)", e))?;
    if at.is_ipv6() {
        // IPv6 only: the IPv4 twin holds 0.0.0.0 at the same port.
        set_opt(fd.as_raw_fd(), libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, &one)
            .map_err(|e| err("IPV6_V6ONLY", e))?;
    }
    reset_on_close(&fd);
    to_addr(fd.as_raw_fd(), at, libc::bind).map_err(|e| err("bind", e))?;
    // SAFETY: listen on our socket.
    if unsafe { libc::listen(fd.as_raw_fd(), LISTEN_BACKLOG) } < 0 {
        return Err(err("listen", std::io::Error::last_os_error()));
    }
    Ok(TcpListener::from(fd))
}

/// Whether this network namespace has IPv6: the kernel has it and
/// `net.ipv6.conf.all.disable_ipv6` is 0 (what `spacetp gateway` checks before it
/// intercepts IPv6 too).
pub(crate) fn ipv6_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv6/conf/all/disable_ipv6")
        .is_ok_and(|v| v.trim() == "0")
}

/// The IPv6 transparent socket next to one at `0.0.0.0:PORT`: `[::]:PORT`, if this
/// namespace has IPv6; None for any other address (the caller chose one family).
pub(crate) fn ipv6_twin(at: SocketAddr) -> Option<SocketAddr> {
    let any4 = at.ip() == std::net::IpAddr::from([0, 0, 0, 0]);
    (any4 && ipv6_enabled()).then(|| SocketAddr::from(([0u16; 8], at.port())))
}

/// Start a non-blocking kernel-TCP connect.
pub(crate) fn connect_nonblocking(to: SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpStream::from(tcp_socket(&to)?);
    reset_on_close(&s);
    if let Err(e) = to_addr(s.as_raw_fd(), to, libc::connect) {
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
    }
    s.set_nodelay(true).ok();
    Ok(s)
}
