import PXTools

await PXGet.main()
