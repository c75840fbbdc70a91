//! The few system calls both real-time loops (emulator and gateway) need, wrapped once.

use crate::error::LiveError;
use spacetp_proto::Time;
use std::os::fd::RawFd;

/// Nanoseconds of `CLOCK_MONOTONIC`.
pub fn monotonic_ns() -> Time {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as Time * 1_000_000_000 + ts.tv_nsec as Time
}

pub fn set_nonblocking(fd: RawFd) -> Result<(), LiveError> {
    // SAFETY: fcntl on an fd the caller owns; no memory is passed.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl < 0 || libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) < 0 {
            return Err(LiveError::last_os(format!(
                "fd {fd}: cannot make it non-blocking"
            )));
        }
    }
    Ok(())
}

pub fn sleep_ns(ns: Time) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: nanosleep with a timespec we own; an early wake (EINTR) is harmless.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

pub fn set_fifo(on: bool) -> Result<(), LiveError> {
    let param = libc::sched_param {
        sched_priority: if on { 10 } else { 0 },
    };
    let policy = if on {
        libc::SCHED_FIFO
    } else {
        libc::SCHED_OTHER
    };
    // SAFETY: sched_setscheduler on the calling thread with a param we own.
    let r = unsafe { libc::sched_setscheduler(0, policy, &param) };
    if r != 0 {
        return Err(LiveError::last_os("realtime: cannot set SCHED_FIFO"));
    }
    Ok(())
}

/// Asks for `bytes` of send and receive buffer on a socket (best effort: the kernel caps
/// it at net.core.[rw]mem_max, and a refusal leaves the default).
pub fn set_socket_buffers(fd: RawFd, bytes: i32) {
    for opt in [libc::SO_RCVBUF, libc::SO_SNDBUF] {
        // SAFETY: an int option read from the stack for the length given.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                opt,
                &bytes as *const i32 as *const libc::c_void,
                std::mem::size_of::<i32>() as libc::socklen_t,
            )
        };
    }
}

/// Raises this process's soft limit of open files to its hard limit (a relaying gateway needs
/// a descriptor per connection on each side); the limit now in force.
pub fn raise_fd_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on a struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 0;
        }
        if r.rlim_cur < r.rlim_max {
            let want = libc::rlimit {
                rlim_cur: r.rlim_max,
                rlim_max: r.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &want) == 0 {
                r.rlim_cur = r.rlim_max;
            }
        }
    }
    r.rlim_cur
}

/// Sleeps until one of `fds` is readable or `ns` pass (a negative fd is ignored).
pub fn wait_readable(fds: &[RawFd], ns: Time) {
    let mut pfd: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: pollfds we own for the length given, a timespec on the stack, no signal mask.
    unsafe {
        libc::ppoll(
            pfd.as_mut_ptr(),
            pfd.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
}
