import PXTools

await PXSyncMain.main()
