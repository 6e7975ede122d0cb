import { afterAll, beforeAll, describe } from 'vitest';
import { describeLeaseContract } from '../../contracts/lease-contract.js';
import {
  dropTestDatabases,
  emptyDatabase,
  openPostgresStore,
  postgres,
  postgresReachable,
  testDatabase,
} from './postgres.fixtures.js';
import { describeSharedStoreContract } from '../../contracts/shared-store-contract.js';
import { describeStoreContract } from '../../contracts/store-contract.js';

describe.skipIf(!postgresReachable)(`Postgres (${JSON.stringify(postgres)})`, () => {
  let url = '';
  beforeAll(async () => {
    url = await testDatabase();
  });
  afterAll(dropTestDatabases);
  const cleanup = async (store: { close?: () => Promise<void> }) => {
    await store.close?.();
    await emptyDatabase(url);
  };

  describeStoreContract('PostgresConversationStore', () => openPostgresStore(url), cleanup);
  describeLeaseContract('PostgresConversationStore', () => openPostgresStore(url), cleanup);
  describeSharedStoreContract(
    'PostgresConversationStore, two pools on one database',
    async () => [await openPostgresStore(url), await openPostgresStore(url)],
    () => emptyDatabase(url),
  );
});
