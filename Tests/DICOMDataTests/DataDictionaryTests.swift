import Testing

@testable import DICOMData

/// Swift Testing has a `Tag` type of its own.
private typealias Tag = DICOMData.Tag

@Suite(.timeLimit(.minutes(2))) struct DataDictionaryTests {
    @Test func mapsKeywordsToTagsAndBack() {
        let pairs: [(String, Tag)] = [
            ("PatientName", .patientName),
            ("PatientID", .patientID),
            ("SOPClassUID", .sopClassUID),
            ("StudyInstanceUID", .studyInstanceUID),
            ("TransferSyntaxUID", .transferSyntaxUID),
            ("PixelData", .pixelData),
            ("CommandField", Tag(0x0000, 0x0100)),
            ("AffectedSOPClassUID", Tag(0x0000, 0x0002)),
            ("ReferencedSOPSequence", Tag(0x0008, 0x1199)),
        ]
        for (keyword, tag) in pairs {
            #expect(DataDictionary.tag(forKeyword: keyword) == tag)
            #expect(DataDictionary.entry(for: tag)?.keyword == keyword)
            #expect(DataDictionary.entry(forKeyword: keyword)?.tag == tag)
        }
        #expect(DataDictionary.tag(forKeyword: "NoSuchKeyword") == nil)
        #expect(DataDictionary.tag(forKeyword: "") == nil)
    }

    @Test func givesVRVMAndName() throws {
        let name = try #require(DataDictionary.entry(for: .patientName))
        #expect(name.vr == .PN)
        #expect(name.alternativeVRs == [.PN])
        #expect(name.vm == "1")
        #expect(name.name == "Patient's Name")
        #expect(!name.isRetired)

        let imageType = try #require(DataDictionary.entry(for: Tag(0x0008, 0x0008)))
        #expect(imageType.vr == .CS)
        #expect(imageType.vm == "2-n")
        #expect(imageType.name == "Image Type")

        let sequence = try #require(DataDictionary.entry(forKeyword: "ReferencedSeriesSequence"))
        #expect(sequence.vr == .SQ)
    }

    @Test func choosesTheImplicitVRForMultiVRElements() throws {
        let pixelData = try #require(DataDictionary.entry(for: .pixelData))
        #expect(pixelData.vr == .OW)
        #expect(Set(pixelData.alternativeVRs) == [.OB, .OW])

        let smallest = try #require(DataDictionary.entry(forKeyword: "SmallestImagePixelValue"))
        #expect(smallest.tag == Tag(0x0028, 0x0106))
        #expect(smallest.vr == .US)
        #expect(Set(smallest.alternativeVRs) == [.US, .SS])

        let grayLUT = try #require(DataDictionary.entry(forKeyword: "GrayLookupTableData"))
        #expect(grayLUT.vr == .US)
        #expect(Set(grayLUT.alternativeVRs) == [.US, .SS, .OW])

        let item = try #require(DataDictionary.entry(for: .item))
        #expect(item.vr == .UN)
        #expect(item.alternativeVRs.isEmpty)
        #expect(DataDictionary.entry(for: .sequenceDelimitationItem)?.keyword == "SequenceDelimitationItem")

        // DCMTK's "up" (an offset) is UL.
        #expect(DataDictionary.entry(forKeyword: "OffsetOfTheNextDirectoryRecord")?.vr == .UL)
    }

    @Test func matchesRepeatingGroups() throws {
        let overlay = try #require(DataDictionary.entry(for: Tag(0x6002, 0x3000)))
        #expect(overlay.keyword == "OverlayData")
        #expect(overlay.tag == Tag(0x6000, 0x3000))
        #expect(overlay.vr == .OW)
        #expect(overlay.alternativeVRs.contains(.OB))
        #expect(!overlay.isRetired)
        #expect(DataDictionary.entry(for: Tag(0x60FE, 0x0010))?.keyword == "OverlayRows")
        #expect(DataDictionary.tag(forKeyword: "OverlayData") == Tag(0x6000, 0x3000))

        let points = try #require(DataDictionary.entry(for: Tag(0x5004, 0x0010)))
        #expect(points.keyword == "NumberOfPoints")
        #expect(points.tag == Tag(0x5000, 0x0010))
        #expect(points.isRetired)

        #expect(DataDictionary.entry(for: Tag(0x7F02, 0x0010))?.keyword == "VariablePixelData")
        #expect(DataDictionary.entry(for: Tag(0x0020, 0x3105))?.keyword == "SourceImageIDs")
        #expect(DataDictionary.entry(for: Tag(0x1010, 0x1234))?.keyword == "ZonalMap")
        #expect(DataDictionary.entry(for: Tag(0x1000, 0x0121))?.keyword == "RunLengthTriplet")
        #expect(DataDictionary.entry(for: Tag(0x0028, 0x0431))?.keyword == "ColumnsForNthOrderCoefficients")
        // An exact entry wins over an overlapping mask: (0028,0400) vs (0028,04x0).
        #expect(DataDictionary.entry(for: Tag(0x0028, 0x0400))?.keyword == "TransformLabel")
        // Odd groups are private, never repeating groups (PS3.5 §7.6).
        #expect(DataDictionary.entry(for: Tag(0x6001, 0x3000)) == nil)
    }

    @Test func flagsRetiredElements() {
        #expect(DataDictionary.entry(forKeyword: "CommandLengthToEnd")?.isRetired == true)
        #expect(DataDictionary.entry(for: Tag(0x0008, 0x0010))?.isRetired == true)  // Recognition Code
        #expect(DataDictionary.entry(forKeyword: "SourceImageIDs")?.isRetired == true)
        #expect(DataDictionary.entry(forKeyword: "StudyDate")?.isRetired == false)
        // Known only to DCMTK's dictionary: named from its keyword.
        #expect(DataDictionary.entry(for: Tag(0x0006, 0x0001))?.name == "Current Frame Functional Groups Sequence")
    }

    @Test func coversGroupLengthsAndPrivateCreators() throws {
        let metaLength = try #require(DataDictionary.entry(for: .fileMetaInformationGroupLength))
        #expect(metaLength.keyword == "FileMetaInformationGroupLength")
        #expect(metaLength.vr == .UL)

        let groupLength = try #require(DataDictionary.entry(for: Tag(0x0010, 0x0000)))
        #expect(groupLength.vr == .UL)
        #expect(groupLength.tag == Tag(0x0010, 0x0000))
        #expect(groupLength.keyword == "GenericGroupLength")
        #expect(DataDictionary.entry(for: Tag(0x1000, 0x0000))?.vr == .UL)

        let creator = try #require(DataDictionary.entry(for: Tag(0x0029, 0x0010)))
        #expect(creator.keyword == "PrivateCreator")
        #expect(creator.vr == .LO)
        #expect(creator.tag == Tag(0x0029, 0x0010))
        #expect(DataDictionary.entry(for: Tag(0x0029, 0x00FF))?.keyword == "PrivateCreator")
        #expect(DataDictionary.entry(for: Tag(0x0029, 0x1010)) == nil)
    }

    @Test func knowsNothingOfUnknownTags() {
        #expect(DataDictionary.entry(for: Tag(0x0011, 0x1001)) == nil)
        #expect(DataDictionary.entry(for: Tag(0x0010, 0xFFF0)) == nil)
        #expect(DataDictionary.entry(for: Tag(0x4000, 0x0001)) == nil)
    }

    /// `keyword(for:)` reads one cell of a line and the keyword index is a generated binary-search
    /// table; both must agree with the whole entries, for every line of the table and the tags entries
    /// don't list.
    @Test func fastKeywordPathsAgreeWithEntries() {
        let storage = DataDictionaryStorage.shared
        var tags = storage.exactTags.map { Tag(rawValue: $0) }
        tags += storage.masked.map { Tag(rawValue: $0.value) }
        tags += [
            Tag(0x6002, 0x3000), Tag(0x0009, 0x0000), Tag(0x0010, 0x0000), Tag(0x0011, 0x0010), Tag(0x4000, 0x0001),
        ]
        #expect(tags.count > 5000)
        for tag in tags {
            let entry = DataDictionary.entry(for: tag)
            let keyword = entry.flatMap { $0.keyword.isEmpty ? nil : $0.keyword }
            #expect(DataDictionary.keyword(for: tag) == keyword, "\(tag)")
            // The synthetic entries (group lengths, private creators) stand for many tags: no reverse lookup.
            if let keyword, let entry, !tag.isGroupLength, !tag.isPrivateCreator {
                #expect(DataDictionary.entry(forKeyword: keyword)?.keyword == keyword)
                if DataDictionary.tag(forKeyword: keyword) == nil {
                    Issue.record("\(keyword) of \(entry.tag) not indexed")
                }
            }
        }
    }

    /// The generated indexes (DataDictionaryIndex.swift) against the table itself, line by line: each
    /// exact tag finds its line with the VR and US/SS flag its VR cell gives, each pattern's value finds its
    /// line, and each keyword its representative tag.
    @Test func indexesAgreeWithTheTable() throws {
        let storage = DataDictionaryStorage.shared
        let table = Array(
            UnsafeBufferPointer(start: dataDictionaryTable.utf8Start, count: dataDictionaryTable.utf8CodeUnitCount))
        var offset = 0
        var lines = 0
        for line in table.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            defer { offset += line.count + 1 }
            lines += 1
            let cells = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            let pattern = String(decoding: cells[0], as: UTF8.self)
            let value = try #require(UInt32(String(pattern.map { $0 == "x" ? "0" : $0 }), radix: 16))
            let representative =
                cells[1].isEmpty ? value : try #require(UInt32(String(decoding: cells[1], as: UTF8.self), radix: 16))
            let vrs = DataDictionaryStorage.vrs(cells[2])
            // A pattern's own value can be an exact tag of another line, or a group length: checked in the
            // list of masked lines instead.
            let slot: DataDictionaryStorage.Slot
            if pattern.contains("x") {
                let masked = try #require(storage.masked.first { $0.slot.line == Int32(offset) }, "\(pattern)")
                #expect(masked.value == value && value & masked.mask == value, "\(pattern)")
                slot = masked.slot
            } else {
                slot = try #require(storage.slot(for: Tag(rawValue: value)), "\(pattern)")
                #expect(slot.line == Int32(offset), "\(pattern)")
            }
            #expect(slot.vr == DataDictionaryStorage.implicitVR(vrs), "\(pattern)")
            #expect(slot.usOrSS == (vrs.contains(.US) && vrs.contains(.SS)), "\(pattern)")
            let keyword = String(decoding: cells[5], as: UTF8.self)
            if !keyword.isEmpty {
                #expect(DataDictionary.tag(forKeyword: keyword) == Tag(rawValue: representative), "\(keyword)")
            }
        }
        #expect(lines == DataDictionary.count)
        #expect(DataDictionary.tag(forKeyword: "PatientNam") == nil)
        #expect(DataDictionary.tag(forKeyword: "PatientNameX") == nil)
        #expect(DataDictionary.tag(forKeyword: "zzz") == nil)
        #expect(DataDictionary.tag(forKeyword: "AAA") == nil)
    }

    @Test func isComplete() {
        #expect(DataDictionary.count > 4000)
        #expect(DataDictionary.count == 5180)
    }

    @Test func looksUpUIDs() throws {
        let ct = try #require(UIDDictionary.entry(for: "1.2.840.10008.5.1.4.1.1.2"))
        #expect(ct.name == "CT Image Storage")
        #expect(ct.keyword == "CTImageStorage")
        #expect(ct.type == "SOP Class")
        #expect(!ct.isRetired)

        let explicitBig = try #require(UIDDictionary.entry(for: WellKnownUID.explicitVRBigEndian))
        #expect(explicitBig.type == "Transfer Syntax")
        #expect(explicitBig.isRetired)

        #expect(UIDDictionary.uid(forKeyword: "ExplicitVRLittleEndian") == WellKnownUID.explicitVRLittleEndian)
        #expect(UIDDictionary.uid(forKeyword: "Verification") == WellKnownUID.verificationSOPClass)
        #expect(UIDDictionary.entry(for: "1.2.3.4") == nil)
        #expect(UIDDictionary.uid(forKeyword: "Nonsense") == nil)
        #expect(UIDDictionary.count > 400)
    }

    @Test func wellKnownUIDsAreRegistered() {
        let constants =
            [
                WellKnownUID.dicomApplicationContext, WellKnownUID.verificationSOPClass,
                WellKnownUID.patientRootQueryRetrieveFind, WellKnownUID.patientRootQueryRetrieveMove,
                WellKnownUID.patientRootQueryRetrieveGet, WellKnownUID.studyRootQueryRetrieveFind,
                WellKnownUID.studyRootQueryRetrieveMove, WellKnownUID.studyRootQueryRetrieveGet,
                WellKnownUID.modalityWorklistFind, WellKnownUID.storageCommitmentPushModel,
                WellKnownUID.mediaStorageDirectoryStorage, WellKnownUID.secondaryCaptureImageStorage,
                WellKnownUID.encapsulatedUncompressedExplicitVRLittleEndian,
            ] + WellKnownUID.uncompressedTransferSyntaxes
        for uid in constants {
            #expect(UIDDictionary.entry(for: uid) != nil, "\(uid)")
        }
        #expect(
            UIDDictionary.entry(for: WellKnownUID.studyRootQueryRetrieveMove)?.keyword
                == "StudyRootQueryRetrieveInformationModelMove")
    }

    @Test func listsStorageSOPClasses() {
        let storage = UIDDictionary.storageSOPClasses
        #expect(storage.count > 100)
        #expect(storage.contains("1.2.840.10008.5.1.4.1.1.2"))  // CT Image Storage
        #expect(storage.contains(WellKnownUID.secondaryCaptureImageStorage))
        #expect(storage.contains("1.2.840.10008.5.1.4.1.1.1.1"))  // Digital X-Ray - For Presentation
        #expect(!storage.contains(WellKnownUID.mediaStorageDirectoryStorage))
        #expect(!storage.contains(WellKnownUID.storageCommitmentPushModel))
        #expect(!storage.contains(WellKnownUID.verificationSOPClass))
        #expect(!storage.contains("1.2.840.10008.5.1.4.1.1.5"))  // NM Image Storage (retired)
        #expect(Set(storage).count == storage.count)
    }
}
