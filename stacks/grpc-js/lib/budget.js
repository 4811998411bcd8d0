'use strict';
// Pure: what the server's Download calls hold together, and the messages they share
// (ServerJob in protos/worker.proto; servers/grpcio_server.py is the reference).
//
// A call is charged its message (the serialized copy grpc-js holds while the call sends it:
// one at a time, the next write waits for the previous one's callback) and, for a message
// above sharedMaxBytes, the message built for it alone. A call that would go beyond the
// budget is refused before it allocates anything; its charge goes back once, when it ends.

class DownloadBudget {
  constructor(maxBytes, sharedMaxBytes) {
    this.maxBytes = maxBytes;
    this.sharedMaxBytes = sharedMaxBytes;
    this.held = 0;
    this.refused = 0;
  }

  // What a call asking for messages of `size` bytes is charged.
  charge(size) {
    return size + (size > this.sharedMaxBytes ? size : 0);
  }

  // A release function (idempotent), or null when the call is refused (and counted).
  take(size) {
    const n = this.charge(size);
    if (this.held + n > this.maxBytes) {
      this.refused += 1;
      return null;
    }
    this.held += n;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.held -= n;
    };
  }
}

// Serialized messages by size, least recently used first out, bounded in bytes; only sizes
// up to sharedMaxBytes are kept (larger ones are the caller's, per call). build(size) makes one.
class MessageCache {
  constructor(maxBytes, sharedMaxBytes, build) {
    this.maxBytes = maxBytes;
    this.sharedMaxBytes = sharedMaxBytes;
    this.build = build;
    this.messages = new Map();
    this.bytes = 0;
  }

  get(size) {
    const hit = this.messages.get(size);
    if (hit) {
      this.messages.delete(size);
      this.messages.set(size, hit);
      return hit;
    }
    const message = this.build(size);
    if (size <= this.sharedMaxBytes && message.length <= this.maxBytes) {
      this.messages.set(size, message);
      this.bytes += message.length;
      while (this.bytes > this.maxBytes) {
        const [oldSize, old] = this.messages.entries().next().value;
        this.messages.delete(oldSize);
        this.bytes -= old.length;
      }
    }
    return message;
  }
}

module.exports = { DownloadBudget, MessageCache };
