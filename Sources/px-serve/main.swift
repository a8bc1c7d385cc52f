import PXTools

await PXServe.main()
