// Package nand models the flash back end of an SSD on the sim/eventsim core,
// following MQSim's ONFI NV-DDR2 PHY (src/ssd/NVM_PHY_ONFI_NVDDR2.cpp,
// ONFI_Channel_NVDDR2.cpp) for reads:
//
//  1. the command and addresses go over the channel: ReadCommandTime[k] for a
//     k-plane read, t_CS + k x 6 t_WC + (k-1) t_DBSY + t_WB + t_RR;
//  2. the die senses the k pages into its plane registers in tR;
//  3. each page is transferred out over the channel, one at a time, in
//     (bytes / channel width) x (1000 / MT/s) ns (MQSim's
//     NVDDR2DataOutTransferTime with TwoUnitDataOutTime = 2 x 1000 / MT/s);
//  4. the die is free for its next command when its last page is out (no
//     cache-read mode, as in MQSim).
//
// A die gathers up to PlanesPerDie queued reads on distinct planes into one
// multi-plane command (MQSim also requires equal page offsets within the
// blocks; this model ignores block addresses, which the object store's
// layout does not constrain). Reads queued at the same instant are gathered
// together. Each channel is a eventsim.Arbiter shared by the commands and data of
// all its chips: it serves one job at a time, commands ahead of queued data
// (so idle dies start sensing as early as possible, as an SSD controller
// interleaves dies), data in the order the pages became ready. Time is exact
// picoseconds (MQSim truncates 1000/MT/s to whole ns, which is 0 ns at 2400
// MT/s; this model does not).
//
// Pages are located by a Layout function supplied by the caller, so the
// object store's channel-interleaving rule (store/layout) plugs in through
// ChannelRow; RoundRobin is a simple default.
package nand
