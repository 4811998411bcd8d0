//! The line's limits, as `kit/delayline/limits.py`: the total buffer budget, quiet logs for
//! repeated trouble, and enough file descriptors for `max_connections`.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bytes held in every delay queue together against their cap: at the cap, a direction that
/// holds bytes stops reading until its own writer or the others make room; nothing is dropped.
pub struct Budget {
    cap: i64,
    used: AtomicI64,
    full: AtomicBool,
    pub pauses: AtomicU64,
}

impl Budget {
    pub fn new(cap: i64) -> Self {
        Budget {
            cap,
            used: AtomicI64::new(0),
            full: AtomicBool::new(false),
            pauses: AtomicU64::new(0),
        }
    }

    pub fn add(&self, n: i64) {
        let used = self.used.fetch_add(n, Ordering::AcqRel) + n;
        if used >= self.cap && !self.full.swap(true, Ordering::AcqRel) {
            self.pauses.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn release(&self, n: i64) {
        if n == 0 {
            return;
        }
        let used = self.used.fetch_sub(n, Ordering::AcqRel) - n;
        if used < self.cap {
            self.full.store(false, Ordering::Release);
        }
    }

    pub fn full(&self) -> bool {
        self.full.load(Ordering::Acquire)
    }
}

/// One line per interval at most for a repeated condition; later lines say how many were
/// held back, and `flush` (at shutdown) tells the newest held-back one.
pub struct QuietLog {
    interval: Duration,
    state: Mutex<(Option<Instant>, u64, String)>,
}

impl QuietLog {
    pub fn new() -> Self {
        QuietLog {
            interval: Duration::from_secs(1),
            state: Mutex::new((None, 0, String::new())),
        }
    }

    pub fn say(&self, message: String) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if s.0.is_some_and(|last| now.duration_since(last) < self.interval) {
            s.1 += 1;
            s.2 = message;
            return;
        }
        let line = if s.1 > 0 {
            format!("{message} ({} more like it since the last report)", s.1)
        } else {
            message
        };
        crate::log(&line);
        *s = (Some(now), 0, String::new());
    }

    pub fn flush(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.1 > 0 {
            crate::log(&format!("{} ({} more like it since the last report)", s.2, s.1));
            s.1 = 0;
        }
    }
}

impl Default for QuietLog {
    fn default() -> Self {
        Self::new()
    }
}

const FDS_PER_CONNECTION: u64 = 4; // two sockets, the thread's epoll and its timerfd
const FDS_SPARE: u64 = 16;

/// Raise the soft descriptor limit to the hard one (pipes hold a direction's bytes too); a
/// warning when even that is short of what `max_connections` needs.
pub fn ensure_fd_room(max_connections: u64) -> Option<String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reading and setting our own limit.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
    }
    let need = max_connections * FDS_PER_CONNECTION + FDS_SPARE;
    let soft = limit.rlim_cur;
    if soft != libc::RLIM_INFINITY && soft < need {
        let fits = soft.saturating_sub(FDS_SPARE) / FDS_PER_CONNECTION;
        return Some(format!(
            "WARNING: only {soft} file descriptors (ulimit -n): about {fits} connections fit, \
             fewer than --max-connections {max_connections}; more wait in the listen backlog"
        ));
    }
    None
}

pub fn is_out_of_resources(err: &std::io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}
