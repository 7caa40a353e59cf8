/**
 * A small TCP proxy in front of the broker's `PROXIED` listener (test/broker/broker.ts,
 * `advertisedPort`), so the chaos harness can destroy live client connections.
 *
 * The broker advertises the proxy's address on that listener, so clients that bootstrap
 * through the proxy keep going through it for every later connection (metadata names
 * the listener a request came in on). While the broker is down, new connections are
 * accepted and closed at once (the upstream refuses), as a client would see it.
 *
 * @module
 */
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from "node:net";

/** One proxied client connection: the client's socket and the broker-side socket. */
interface Pair {
  client: Socket;
  upstream: Socket;
}

/** A running proxy from {@link startProxy}. */
export interface Proxy {
  /** The port clients connect to (127.0.0.1). */
  readonly port: number;
  /** The broker port connections are forwarded to; set it before clients connect. */
  target: number | undefined;
  /** Client connections open now. */
  readonly open: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections destroyed by {@link Proxy.drop} so far. */
  readonly dropped: number;
  /** Destroys up to `n` open connections chosen with `random` (both sides, at once); returns how many. */
  drop(n: number, random: () => number): number;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

/**
 * Starts a proxy on a free 127.0.0.1 port. Connections accepted before `target` is set
 * are closed at once.
 */
export async function startProxy(): Promise<Proxy> {
  const pairs = new Set<Pair>();
  let accepted = 0;
  let dropped = 0;
  const state: { target: number | undefined } = { target: undefined };
  const server: Server = createServer((client) => {
    accepted++;
    const target = state.target;
    if (target === undefined) {
      client.destroy();
      return;
    }
    client.pause(); // hold the client's bytes until the upstream is connected
    const upstream = createConnection({ host: "127.0.0.1", port: target });
    const pair: Pair = { client, upstream };
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // Either side closing or failing ends both: a client never half-talks to a dead broker.
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    upstream.once("connect", () => {
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  server.on("error", () => {});
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    get target() {
      return state.target;
    },
    set target(p: number | undefined) {
      state.target = p;
    },
    get open() {
      return pairs.size;
    },
    get accepted() {
      return accepted;
    },
    get dropped() {
      return dropped;
    },
    drop(n, random) {
      const live = [...pairs];
      let done = 0;
      while (done < n && live.length > 0) {
        const [pair] = live.splice(Math.floor(random() * live.length), 1);
        pairs.delete(pair);
        pair.client.destroy();
        pair.upstream.destroy();
        done++;
      }
      dropped += done;
      return done;
    },
    close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      pairs.clear();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
