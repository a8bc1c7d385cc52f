extension Part10File {
    /// The file's bytes: a 128-byte zero preamble, `DICM`, the file meta information with a correct
    /// (0002,0000) group length, and the data set in ``transferSyntax`` (PS3.10 §7.1).
    ///
    /// Media Storage SOP Class/Instance UID come from the data set's SOP Class/Instance UID when present,
    /// the Implementation Class UID and Version Name are px's; other meta elements are kept.
    /// - Throws: ``DICOMDataError`` when the transfer syntax cannot be written.
    public func encoded() throws(DICOMDataError) -> [UInt8] {
        var meta = self.meta
        meta.remove(.fileMetaInformationGroupLength)
        meta.set(DataElement(tag: .fileMetaInformationVersion, vr: .OB, bytes: [0x00, 0x01]))
        if let sopClass = dataSet[.sopClassUID] {
            meta.set(DataElement(tag: .mediaStorageSOPClassUID, vr: .UI, value: sopClass.value))
        }
        if let sopInstance = dataSet[.sopInstanceUID] {
            meta.set(DataElement(tag: .mediaStorageSOPInstanceUID, vr: .UI, value: sopInstance.value))
        }
        meta.set(DataElement(tag: .transferSyntaxUID, vr: .UI, bytes: Self.paddedUID(transferSyntax.uid)))
        meta.set(DataElement(tag: .implementationClassUID, vr: .UI, bytes: Self.paddedUID(Self.implementationClassUID)))
        meta.set(
            DataElement(tag: .implementationVersionName, vr: .SH, bytes: Array(Self.implementationVersionName.utf8)))

        var encodedMeta: [UInt8] = []
        try DataSetWriter.write(meta, transferSyntax: .explicitVRLittleEndian, into: &encodedMeta)

        var out = [UInt8](repeating: 0, count: 128)
        out.reserveCapacity(128 + 4 + 12 + encodedMeta.count + 1024)
        out.append(contentsOf: [0x44, 0x49, 0x43, 0x4D])
        // (0002,0000) UL, value = length of the rest of the meta group.
        out.append(contentsOf: [0x02, 0x00, 0x00, 0x00, 0x55, 0x4C, 0x04, 0x00])
        let n = UInt32(encodedMeta.count)
        out.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)])
        out.append(contentsOf: encodedMeta)
        var body: [UInt8] = []
        try DataSetWriter.write(dataSet, transferSyntax: transferSyntax, into: &body)
        out.append(contentsOf: body)
        return out
    }

    /// A UID's bytes padded with NUL to even length (PS3.5 §9.1).
    static func paddedUID(_ uid: String) -> [UInt8] {
        var bytes = Array(uid.utf8)
        if bytes.count & 1 == 1 { bytes.append(0) }
        return bytes
    }
}
