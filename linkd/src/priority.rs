//! Priority follows lightness. A connection thread that has shown it uses little (a
//! ping-pong, an RPC's bytes, HTTP/2's WINDOW_UPDATEs and PINGs: at most `BUSY_SHARE` of a
//! core and `BUSY_BYTES` over each of `QUIET_WINDOWS` windows of `WINDOW_NS` in a row) is
//! light: it runs at real-time priority (SCHED_FIFO 1),
//! so on a busy machine its timer and socket wake-ups do not wait behind other work for a
//! CPU, and it spins the last `SPIN_NS` before a due time instead of sleeping through a
//! wake-up. A thread starts in the normal class and goes back to it after any busy window
//! (a bulk transfer), so the real-time class and the spin only ever hold threads that cannot
//! starve anyone, and a burst of new bulk connections never holds a light one back.
//!
//! Measured on a loaded 2-core VM (ping-pong through the line beside the floor, interleaved):
//! the spin took p50 over the floor from +0.069 to +0.012 ms at 10 ms and from +0.196 to
//! +0.054 at 20 ms (80 us; 30 us did half). Without the privilege (CAP_SYS_NICE, or root)
//! light threads stay in the normal class, as the Python line's do (they still spin).
//! `KIT_LINKD_LIGHT=off` turns both off, for measuring side by side.

use std::sync::atomic::{AtomicBool, Ordering};

const WINDOW_NS: i64 = 20_000_000;
const BUSY_SHARE: f64 = 0.25;
const BUSY_BYTES: u64 = 256 * 1024; // 12.5 MiB/s: a bulk transfer that waits on its peers
const QUIET_WINDOWS: u32 = 5; // a bulk transfer that pauses for a moment stays bulk
pub const SPIN_NS: i64 = 100_000;
static NO_REALTIME: AtomicBool = AtomicBool::new(false);

fn thread_cpu_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

fn set_class(realtime: bool) -> bool {
    let (policy, priority) = if realtime {
        (libc::SCHED_FIFO, 1)
    } else {
        (libc::SCHED_OTHER, 0)
    };
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: the calling thread (0) and a valid parameter.
    unsafe { libc::sched_setscheduler(0, policy, &param) == 0 }
}

pub struct Priority {
    enabled: bool,
    light: bool,
    realtime: bool,
    quiet: u32,
    window_wall_ns: i64,
    window_cpu_ns: i64,
    window_bytes: u64,
}

impl Priority {
    /// The calling thread: busy (normal class, no spin) until `QUIET_WINDOWS` quiet windows.
    pub fn start(now_ns: i64) -> Self {
        let enabled = std::env::var("KIT_LINKD_LIGHT").map_or(true, |v| v != "off");
        Priority {
            enabled,
            light: false,
            realtime: false,
            quiet: 0,
            window_wall_ns: now_ns,
            window_cpu_ns: thread_cpu_ns(),
            window_bytes: 0,
        }
    }

    /// Light now: real-time where allowed, and spinning before due times.
    pub fn light(&self) -> bool {
        self.light
    }

    /// Bytes the connection read (both directions), for the current window.
    pub fn moved(&mut self, n_bytes: usize) {
        self.window_bytes += n_bytes as u64;
    }

    /// Look at the last window (once per `WINDOW_NS`) and change class if it says so.
    pub fn update(&mut self, now_ns: i64) {
        let wall = now_ns - self.window_wall_ns;
        if wall < WINDOW_NS || !self.enabled {
            return;
        }
        let cpu = thread_cpu_ns();
        let quiet = ((cpu - self.window_cpu_ns) as f64) <= BUSY_SHARE * wall as f64
            && self.window_bytes <= BUSY_BYTES;
        self.quiet = if quiet { self.quiet + 1 } else { 0 };
        self.light = self.quiet >= QUIET_WINDOWS;
        (self.window_wall_ns, self.window_cpu_ns, self.window_bytes) = (now_ns, cpu, 0);
        if self.light != self.realtime && !NO_REALTIME.load(Ordering::Relaxed) {
            if set_class(self.light) {
                self.realtime = self.light;
            } else {
                NO_REALTIME.store(true, Ordering::Relaxed); // not ours to ask: stay as we are
            }
        }
    }
}
