import type Database from 'better-sqlite3';
import { CONVERSATION_LEASE_PREFIX, type Lease, newLeaseToken } from '../../src/leases.js';

/** A conversation's lease taken by `claim`. */
interface Claimed {
  lease: Lease;
  conversationId: string;
}

/** `now` plus `@ttl` on the database's clock, in the format every timestamp column uses. */
const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
const UNTIL = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (@ttl / 1000.0) || ' seconds')`;
const RETURNING = 'RETURNING name, holder, token, expires_at AS expiresAt';

/**
 * The SQL of `leases`: one statement each, so two connections (two processes) on one file
 * never both take a lease; time is SQLite's clock.
 *
 * @example
 * ```ts
 * const leases = new LeaseStatements(db);
 * leases.acquire('conversation:telegram:42', 'host:4242:ab12', 30_000); // a Lease, or undefined
 * ```
 */
export class LeaseStatements {
  readonly #acquire: Database.Statement;
  readonly #take: Database.Statement;
  readonly #renew: Database.Statement;
  readonly #release: Database.Statement;
  readonly #unfinished: Database.Statement;
  readonly #claim: Database.Transaction<(holder: string, ttl: number) => Claimed[]>;

  constructor(db: Database.Database) {
    const insert = `INSERT INTO leases (name, holder, token, expires_at)
      VALUES (@name, @holder, @token, ${UNTIL})
      ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
        token = CASE WHEN leases.holder = excluded.holder THEN leases.token ELSE excluded.token END`;
    this.#acquire = db.prepare(
      `${insert} WHERE leases.expires_at <= ${NOW} OR leases.holder = excluded.holder ${RETURNING}`,
    );
    this.#take = db.prepare(`${insert} WHERE leases.expires_at <= ${NOW} ${RETURNING}`);
    this.#renew = db.prepare(
      `UPDATE leases SET expires_at = ${UNTIL} WHERE name = @name AND token = @token ${RETURNING}`,
    );
    this.#release = db.prepare('DELETE FROM leases WHERE name = ? AND token = ?');
    this.#unfinished = db
      .prepare(
        `SELECT DISTINCT conversation_id FROM agent_runs
         WHERE status IN ('pending', 'running') ORDER BY conversation_id`,
      )
      .pluck();
    this.#claim = db.transaction((holder: string, ttl: number) => {
      const claimed: Claimed[] = [];
      for (const conversationId of this.#unfinished.all() as string[]) {
        const name = `${CONVERSATION_LEASE_PREFIX}${conversationId}`;
        const lease = this.#take.get({ name, holder, token: newLeaseToken(), ttl }) as
          Lease | undefined;
        if (lease !== undefined) claimed.push({ lease, conversationId });
      }
      return claimed;
    });
  }

  acquire(name: string, holder: string, ttl: number): Lease | undefined {
    return this.#acquire.get({ name, holder, token: newLeaseToken(), ttl }) as Lease | undefined;
  }

  renew(lease: Lease, ttl: number): Lease | undefined {
    return this.#renew.get({ name: lease.name, token: lease.token, ttl }) as Lease | undefined;
  }

  release(lease: Lease): void {
    this.#release.run(lease.name, lease.token);
  }

  /** Takes the free or expired lease of each conversation with unfinished runs, in one transaction. */
  claim(holder: string, ttl: number): Claimed[] {
    return this.#claim.immediate(holder, ttl);
  }
}
