interface Corkable {
  cork(): void;
  uncork(): void;
}

const corked = new Set<Corkable>();
let scheduled = false;

function uncorkAll(): void {
  scheduled = false;
  for (const socket of corked) socket.uncork();
  corked.clear();
}

/**
 * Corks `socket` until the event loop's check phase, when every socket corked in this turn is
 * uncorked together: frames produced in one turn (answers finishing together, a burst of run
 * events) leave in one write per socket, and the turn costs one setImmediate for all its sockets
 * rather than one each (an Immediate is also an async resource the trace hooks run for).
 */
export function corkForTurn(socket: Corkable): void {
  if (corked.has(socket)) return;
  socket.cork();
  corked.add(socket);
  if (!scheduled) {
    scheduled = true;
    setImmediate(uncorkAll);
  }
}
