import PXTools

await PXMultiCall.main()
