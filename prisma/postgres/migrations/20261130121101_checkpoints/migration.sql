-- CreateTable
CREATE TABLE "Checkpoint" (
    "id" TEXT NOT NULL,
    "upToSeq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "cutoff" TIMESTAMP(3) NOT NULL,
    "prunedEvents" INTEGER NOT NULL,
    "prunedCalls" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "signature" TEXT NOT NULL,

    CONSTRAINT "Checkpoint_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Checkpoint_upToSeq_key" ON "Checkpoint"("upToSeq");
