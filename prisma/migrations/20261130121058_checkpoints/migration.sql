-- CreateTable
CREATE TABLE "Checkpoint" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "upToSeq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "cutoff" DATETIME NOT NULL,
    "prunedEvents" INTEGER NOT NULL,
    "prunedCalls" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "signature" TEXT NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "Checkpoint_upToSeq_key" ON "Checkpoint"("upToSeq");
