import PXTools

await PXMultiCall.main(PXSyncMain.self)
