import PXTools

await PXMove.main()
