import { SimpleShardingStrategy } from 'discord.js';
import type { GatewayDispatchPayload, IShardingStrategy, WebSocketOptions } from 'discord.js';

/** The `@discordjs/ws` manager a sharding strategy is built for. */
type ShardManager = Parameters<NonNullable<WebSocketOptions['buildStrategy']>>[0];

/** Called with a gateway dispatch discord.js threw on, and what it threw. */
export type BrokenPacketHandler = (packet: GatewayDispatchPayload, error: unknown) => void;

/**
 * A `ws.buildStrategy` for discord.js that keeps one broken gateway event from ending the
 * process. discord.js handles each dispatch synchronously inside the shard's message handler
 * (`MESSAGE_CREATE` with `d: null` throws there), where nothing catches it: the rejection is
 * unhandled and Node exits. This strategy is discord.js's own `SimpleShardingStrategy`, given
 * a view of the manager whose `emit` of a dispatch catches what the client's handlers throw
 * and hands the packet to `onBroken`; the connection goes on with the next event. A dispatch
 * without a `d` object never reaches discord.js (while starting, discord.js queues events and
 * handles them later, outside any guard).
 *
 * @example
 * ```ts
 * new Client({ intents, ws: { buildStrategy: guardedSharding((packet, error) => log(packet.t, error)) } });
 * ```
 */
export function guardedSharding(
  onBroken: BrokenPacketHandler,
): (manager: ShardManager) => IShardingStrategy {
  return (manager) => new SimpleShardingStrategy(guardDispatches(manager, onBroken));
}

function guardDispatches(manager: ShardManager, onBroken: BrokenPacketHandler): ShardManager {
  const real = manager.emit.bind(manager) as (event: string, payload: unknown) => boolean;
  const emit = (event: string, payload: { data?: GatewayDispatchPayload }): boolean => {
    if (event !== 'dispatch') return real(event, payload);
    const packet = payload.data;
    // Every dispatch discord.js reads carries an object; one without is dropped here, so it is
    // not queued (before READY completes) and handled later outside this guard.
    if (packet !== undefined && packet.t !== 'RESUMED' && !isObject(packet.d)) {
      onBroken(packet, new Error('the event carries no data object (d)'));
      return true;
    }
    try {
      return real(event, payload);
    } catch (error) {
      if (payload.data !== undefined) onBroken(payload.data, error);
      return true;
    }
  };
  // Everything else is the manager itself (methods bound to it: it has private fields).
  return new Proxy(manager, {
    get(target, key) {
      if (key === 'emit') return emit;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}
