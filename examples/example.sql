-- An example export in the nsys 2022.4 (schema 3.0.0) layout: 30 training
-- iterations, each a blocking 16 MiB cudaMemcpy from pageable memory and a
-- kernel launched with cuLaunchKernel; before iteration 20 the host stalls
-- for 700 ms. Built into build/examples/example.sqlite by tools/sql2sqlite.
-- Table definitions follow a real nsys export (comments dropped).
CREATE TABLE EXPORT_META_DATA (
    name                        TEXT      NOT NULL,
    value                       TEXT
);
CREATE TABLE StringIds (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    value                       TEXT      NOT NULL
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    demangledName               INTEGER   NOT NULL,
    shortName                   INTEGER   NOT NULL,
    mangledName                 INTEGER,
    launchType                  INTEGER,
    cacheConfig                 INTEGER,
    registersPerThread          INTEGER   NOT NULL,
    gridX                       INTEGER   NOT NULL,
    gridY                       INTEGER   NOT NULL,
    gridZ                       INTEGER   NOT NULL,
    blockX                      INTEGER   NOT NULL,
    blockY                      INTEGER   NOT NULL,
    blockZ                      INTEGER   NOT NULL,
    staticSharedMemory          INTEGER   NOT NULL,
    dynamicSharedMemory         INTEGER   NOT NULL,
    localMemoryPerThread        INTEGER   NOT NULL,
    localMemoryTotal            INTEGER   NOT NULL,
    gridId                      INTEGER   NOT NULL,
    sharedMemoryExecuted        INTEGER,
    graphNodeId                 INTEGER,
    sharedMemoryLimitConfig     INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    deviceId                    INTEGER   NOT NULL,
    contextId                   INTEGER   NOT NULL,
    streamId                    INTEGER   NOT NULL,
    correlationId               INTEGER,
    globalPid                   INTEGER,
    bytes                       INTEGER   NOT NULL,
    copyKind                    INTEGER   NOT NULL,
    deprecatedSrcId             INTEGER,
    srcKind                     INTEGER,
    dstKind                     INTEGER,
    srcDeviceId                 INTEGER,
    srcContextId                INTEGER,
    dstDeviceId                 INTEGER,
    dstContextId                INTEGER,
    migrationCause              INTEGER,
    graphNodeId                 INTEGER,
    virtualAddress              INTEGER
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,
    end                         INTEGER   NOT NULL,
    eventClass                  INTEGER   NOT NULL,
    globalTid                   INTEGER,
    correlationId               INTEGER,
    nameId                      INTEGER   NOT NULL,
    returnValue                 INTEGER   NOT NULL,
    callchainId                 INTEGER
);
CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,
    end                         INTEGER,
    eventType                   INTEGER   NOT NULL,
    rangeId                     INTEGER,
    category                    INTEGER,
    color                       INTEGER,
    text                        TEXT,
    globalTid                   INTEGER,
    endGlobalTid                INTEGER,
    textId                      INTEGER,
    domainId                    INTEGER,
    uint64Value                 INTEGER,
    int64Value                  INTEGER,
    doubleValue                 REAL,
    uint32Value                 INTEGER,
    int32Value                  INTEGER,
    floatValue                  REAL,
    jsonTextId                  INTEGER,
    jsonText                    TEXT
);
CREATE TABLE TARGET_INFO_GPU (
    vmId                        INTEGER   NOT NULL,
    id                          INTEGER   NOT NULL,
    name                        TEXT,
    busLocation                 TEXT,
    isDiscrete                  INTEGER,
    l2CacheSize                 INTEGER,
    totalMemory                 INTEGER,
    memoryBandwidth             INTEGER,
    clockRate                   INTEGER,
    smCount                     INTEGER,
    pwGpuId                     INTEGER,
    uuid                        TEXT,
    luid                        INTEGER,
    chipName                    TEXT,
    cuDevice                    INTEGER,
    ctxswDevPath                TEXT,
    ctrlDevPath                 TEXT,
    revision                    INTEGER,
    nodeMask                    INTEGER,
    constantMemory              INTEGER,
    maxIPC                      INTEGER,
    maxRegistersPerBlock        INTEGER,
    maxShmemPerBlock            INTEGER,
    maxShmemPerBlockOptin       INTEGER,
    maxShmemPerSm               INTEGER,
    maxRegistersPerSm           INTEGER,
    threadsPerWarp              INTEGER,
    asyncEngines                INTEGER,
    maxWarpsPerSm               INTEGER,
    maxBlocksPerSm              INTEGER,
    maxThreadsPerBlock          INTEGER,
    maxBlockDimX                INTEGER,
    maxBlockDimY                INTEGER,
    maxBlockDimZ                INTEGER,
    maxGridDimX                 INTEGER,
    maxGridDimY                 INTEGER,
    maxGridDimZ                 INTEGER,
    computeMajor                INTEGER,
    computeMinor                INTEGER,
    smMajor                     INTEGER,
    smMinor                     INTEGER
);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
);
CREATE TABLE ENUM_CUDA_MEM_KIND (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
);
CREATE TABLE PROCESSES (
    globalPid                   INTEGER,
    pid                         INTEGER,
    name                        TEXT
);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (
    id                          INTEGER   NOT NULL   PRIMARY KEY,
    name                        TEXT,
    label                       TEXT
);

INSERT INTO EXPORT_META_DATA VALUES
  ('EXPORT_PRODUCT_NAME', 'NVIDIA Nsight Systems'),
  ('EXPORT_PRODUCT_VERSION', '2022.4.2.1'),
  ('EXPORT_SCHEMA_VERSION', '3.0.0'),
  ('EXPORT_SCHEMA_VERSION_MAJOR', '3'),
  ('EXPORT_SCHEMA_VERSION_MINOR', '0'),
  ('EXPORT_SCHEMA_VERSION_MICRO', '0');
INSERT INTO StringIds VALUES
  (1, 'cudaMemcpy_v3020'), (2, 'cuLaunchKernel'),
  (3, 'train_step_kernel(float*, int)'), (4, 'train_step_kernel'),
  (5, 'cudaDeviceSynchronize_v3020');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES
  (0, 'CUDA_MEMCPY_KIND_UNKNOWN', 'Unknown'), (1, 'CUDA_MEMCPY_KIND_HTOD', 'Host-to-Device'),
  (2, 'CUDA_MEMCPY_KIND_DTOH', 'Device-to-Host'), (8, 'CUDA_MEMCPY_KIND_DTOD', 'Device-to-Device');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES
  (0, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'), (1, 'CUDA_MEMOPR_MEMORY_KIND_PINNED', 'Pinned'),
  (2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE', 'Device');
INSERT INTO TARGET_INFO_GPU (vmId, id, name, busLocation, isDiscrete, totalMemory, smCount, computeMajor, computeMinor)
  VALUES (0, 0, 'NVIDIA H200', '0000:00:06.0', 1, 150109880320, 132, 9, 0);
INSERT INTO PROCESSES VALUES (16777216000, 1000, 'train.py');

-- Iteration i starts at 1 s + 30 ms * i, plus 700 ms from iteration 20 on.
WITH RECURSIVE it(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM it WHERE i < 29),
t(i, t0) AS (SELECT i, 1000000000 + i * 30000000 + (CASE WHEN i >= 20 THEN 700000000 ELSE 0 END) FROM it)
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
  SELECT t0, t0 + 25000000, 59, 'iteration', 16777216000 + 1000, 0 FROM t;

WITH RECURSIVE it(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM it WHERE i < 29),
t(i, t0) AS (SELECT i, 1000000000 + i * 30000000 + (CASE WHEN i >= 20 THEN 700000000 ELSE 0 END) FROM it)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)
  SELECT t0 + 1000000, t0 + 4100000, 1, 16777216000 + 1000, 3 * i + 1, 1, 0 FROM t
  UNION ALL
  SELECT t0 + 5000000, t0 + 5010000, 1, 16777216000 + 1000, 3 * i + 2, 2, 0 FROM t
  UNION ALL
  SELECT t0 + 5020000, t0 + 20100000, 1, 16777216000 + 1000, 3 * i + 3, 5, 0 FROM t;

WITH RECURSIVE it(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM it WHERE i < 29),
t(i, t0) AS (SELECT i, 1000000000 + i * 30000000 + (CASE WHEN i >= 20 THEN 700000000 ELSE 0 END) FROM it)
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid,
                                        bytes, copyKind, srcKind, dstKind)
  SELECT t0 + 1500000, t0 + 4000000, 0, 1, 7, 3 * i + 1, 16777216000, 16777216, 1, 0, 2 FROM t;

WITH RECURSIVE it(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM it WHERE i < 29),
t(i, t0) AS (SELECT i, 1000000000 + i * 30000000 + (CASE WHEN i >= 20 THEN 700000000 ELSE 0 END) FROM it)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
    demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
    staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
  SELECT t0 + 5030000, t0 + 20000000 + (i * 7919) % 300000, 0, 1, 7, 3 * i + 2, 16777216000, 3, 4, 32, 1024, 1, 1, 256, 1, 1,
         0, 0, 0, 0, i + 1 FROM t;
