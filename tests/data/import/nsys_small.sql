-- A small Nsight Systems SQLite export, written by hand after the schema of
-- `nsys export --type sqlite` (docs/import.md lists the columns kptprof reads;
-- the types and the other columns follow NVIDIA's "SQLite Export Schema
-- Reference"). One process (pid 4242: globalPid 4242 << 24), threads 100 and
-- 200, one H100; 2 steps as NVTX push/pop ranges "ProfilerStep#1/2" with a
-- "forward" range inside, a start/end range in domain "mydomain", a mark.
-- Times in ns from the session start. Build: sqlite3 nsys_small.sqlite < nsys_small.sql
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
  l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER,
  pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxId INTEGER,
  computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER,
  cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
  gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
  localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);

INSERT INTO StringIds VALUES (1, 'gemm_kernel(float*, int)'), (2, 'gemm_kernel'), (3, '_Z11gemm_kernelPfi'),
  (4, 'fill_kernel()'), (5, 'fill_kernel'), (6, '_Z11fill_kernelv'), (7, 'cudaLaunchKernel'),
  (8, 'forward'), (9, 'tail_kernel'), (10, 'tail_kernel'), (11, 'tail_kernel');
INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', '0000:19:00.0', 1, 52428800, 85029158912,
  3352320000000, 1980000000, 132, 0, 'GPU-5f21059c-0000-0000-0000-000000000000', 0, 'GH100', 0, 1, 9, 0);

-- steps on thread 100; "forward" by textId in each; a mark; a start/end range in a domain
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) VALUES
  (0, 1000000, 59, 'ProfilerStep#1', 71168950372, NULL, 0),
  (10000, 310000, 59, NULL, 71168950372, 8, 0),
  (1000000, 2000000, 59, 'ProfilerStep#2', 71168950372, NULL, 0),
  (1010000, 1310000, 59, NULL, 71168950372, 8, 0),
  (5000, NULL, 34, 'a mark', 71168950372, NULL, 0),
  (0, 0, 75, 'mydomain', 71168950372, NULL, 3),
  (100000, 900000, 60, 'io', 71168950372, NULL, 3);

-- launches: 100 on thread 100 (in forward), 200 on thread 200 (no range there: the step)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (20500, 25500, 1, 71168950372, 11, 7, 0, NULL),
  (400000, 405000, 1, 71168950472, 13, 7, 0, NULL),
  (1020500, 1025500, 1, 71168950372, 21, 7, 0, NULL),
  (1400000, 1405000, 1, 71168950472, 23, 7, 0, NULL),
  (2500000, 2505000, 1, 71168950372, 31, 7, 0, NULL),
  (50000, 54000, 1, 71168950372, 12, 7, 0, NULL),
  (500000, 503000, 1, 71168950372, 14, 7, 0, NULL);

INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (30250, 130375, 0, 1, 7, 11, 71168950272, 1, 2, 3, 0, 0, 64, 4, 1, 1, 128, 1, 1, 512, 512, 0, 0, 1, 0, NULL, 0),
  (410001, 430003, 0, 1, 7, 13, 71168950272, 4, 5, 6, 0, 0, 16, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, 2, 0, NULL, 0),
  (1030250, 1140375, 0, 1, 7, 21, 71168950272, 1, 2, 3, 0, 0, 64, 4, 1, 1, 128, 1, 1, 512, 512, 0, 0, 3, 0, NULL, 0),
  (1410000, 1432000, 0, 1, 7, 23, 71168950272, 4, 5, 6, 0, 0, 16, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, 4, 0, NULL, 0),
  (2510000, 2515000, 0, 1, 7, 31, 71168950272, 9, 10, 11, 0, 0, 8, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 5, 0, NULL, 0),
  (2600000, 2601000, 0, 1, 7, 99, 71168950272, 9, 10, 11, 0, 0, 8, 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 6, 0, NULL, 0);

-- HtoD pageable -> device (copyKind 1, srcKind 1, dstKind 3); memset of device memory
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes,
  copyKind, srcKind, dstKind, graphNodeId) VALUES (140000, 150000, 0, 1, 7, 12, 71168950272, 4096, 1, 1, 3, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (510000, 511500, 0, 1, 7, 14, 71168950272, 0, 256, NULL, 3);
