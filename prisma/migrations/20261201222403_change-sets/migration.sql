-- CreateTable
CREATE TABLE "ChangeSet" (
    "callId" TEXT NOT NULL PRIMARY KEY,
    "workspaceId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "captureDir" TEXT,
    "summaryJson" TEXT NOT NULL,
    "resultJson" TEXT,
    "recovery" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "FileChange" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "callId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "path" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "beforeType" TEXT,
    "beforeSha" TEXT,
    "beforeMode" INTEGER,
    "beforeLink" TEXT,
    "afterType" TEXT,
    "afterSha" TEXT,
    "afterMode" INTEGER,
    "afterLink" TEXT,
    "size" INTEGER NOT NULL DEFAULT 0,
    "bulky" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "ChangeSet_workspaceId_status_idx" ON "ChangeSet"("workspaceId", "status");

-- CreateIndex
CREATE INDEX "FileChange_callId_seq_idx" ON "FileChange"("callId", "seq");

-- CreateIndex
CREATE INDEX "FileChange_path_idx" ON "FileChange"("path");
