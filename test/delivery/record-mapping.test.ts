import { fieldMapper, fieldSelectionFor, selectAndMapFields } from '../../src/delivery/record-mapping.js';

const raw = {
  Id: '003A',
  FirstName: 'Ada',
  LastName: 'Lovelace',
  Email: 'ada@example.com',
  Industry__c: 'Computing',
  Phone: null,
  properties: { Score: 42 },
};

describe('selectAndMapFields', () => {
  it('puts selected fields under lower-cased names and keeps raw as sent', () => {
    const result = selectAndMapFields(raw, {
      requiredFields: ['Id'],
      selectedFields: { firstname: true, Email: true, LastName: false },
    });
    expect(result.fields).toEqual({ id: '003A', firstname: 'Ada', email: 'ada@example.com' });
    expect(result.mappedFields).toEqual({});
    expect(result.raw).toBe(raw);
  });

  it('moves fields renamed by the manifest to mappedFields under their mapToName', () => {
    const result = selectAndMapFields(raw, {
      requiredFields: ['Id', 'Email'],
      selectedFields: { FirstName: true },
      fieldMappings: { Email: 'emailAddress', LastName: 'surname' },
    });
    expect(result.fields).toEqual({ id: '003A', firstname: 'Ada' });
    // LastName is renamed by the manifest but not selected, so it is not read.
    expect(result.mappedFields).toEqual({ emailAddress: 'ada@example.com' });
  });

  it("maps the customer's chosen fields, which win over the manifest's renames", () => {
    const result = selectAndMapFields(raw, {
      requiredFields: ['Id'],
      selectedFields: { Email: true },
      selectedFieldMappings: { industry: 'industry__c', contact: 'Email' },
      fieldMappings: { Id: 'contact' },
    });
    // Id lost its rename to the customer's mapping, so it is delivered as a plain selected field.
    expect(result.fields).toEqual({ id: '003A' });
    expect(result.mappedFields).toEqual({ industry: 'Computing', contact: 'ada@example.com' });
  });

  it('selects every field the provider sent when all fields are selected, mapped ones aside', () => {
    const result = selectAndMapFields(raw, { allFields: true, fieldMappings: { Email: 'emailAddress' } });
    expect(result.fields).toEqual({
      id: '003A',
      firstname: 'Ada',
      lastname: 'Lovelace',
      industry__c: 'Computing',
      phone: null,
      properties: { Score: 42 },
    });
    expect(result.mappedFields).toEqual({ emailAddress: 'ada@example.com' });
  });

  it('keeps null values, leaves out missing fields, and reaches into nested objects by dotted name', () => {
    const result = selectAndMapFields(raw, {
      selectedFields: { phone: true, fax: true, 'properties.score': true },
      selectedFieldMappings: { rating: 'Properties.Score', missing: 'nothing.here' },
    });
    expect(result.fields).toEqual({ phone: null });
    expect(result.mappedFields).toEqual({ rating: 42 });
  });

  it('applies one prepared selection to many records', () => {
    const map = fieldMapper({
      requiredFields: ['id'],
      fieldMappings: { name: 'fullName' },
      selectedFields: { name: true },
    });
    expect(
      [
        { Id: 1, Name: 'a' },
        { id: 2, name: 'b' },
      ].map((record) => map(record)),
    ).toEqual([
      { fields: { id: 1 }, mappedFields: { fullName: 'a' }, raw: { Id: 1, Name: 'a' } },
      { fields: { id: 2 }, mappedFields: { fullName: 'b' }, raw: { id: 2, name: 'b' } },
    ]);
  });

  it('maps records whose keys change from one to the next as it maps each on its own, key order included', () => {
    const selection = {
      requiredFields: ['id'],
      selectedFields: { 'meta.score': true, email: true },
      selectedFieldMappings: { owner: 'meta.owner.name', label: 'Name' },
      allFields: true,
    };
    const records = [
      { Id: 1, Name: 'a', Email: 'a@x', meta: { score: 1, owner: { name: 'o1' } } },
      { Id: 2, Name: 'b', Email: 'b@x', meta: { score: 2 } },
      { Id: 3, Name: 'c', Email: 'c@x', meta: 'flat' },
      { Name: 'd', Id: 4, Email: 'd@x', meta: { Score: 4, owner: { Name: 'o4' } } },
      { Id: 5, Name: 'e', 'meta.score': 'literal', meta: { score: 5 } },
      { Id: 6, Name: 'f', Email: 'f@x', meta: { score: 6, owner: { name: 'o6' } } },
      { id: 7, ID: 'upper', name: 'g' },
    ];
    const map = fieldMapper(selection);
    for (const record of records) {
      const mapped = map(record);
      const alone = selectAndMapFields(record, selection);
      expect(JSON.stringify(mapped)).toBe(JSON.stringify(alone));
    }
    expect(map(records[0]).mappedFields).toEqual({ owner: 'o1', label: 'a' });
    expect(map(records[1]).fields).toEqual({ id: 2, email: 'b@x', meta: { score: 2 }, 'meta.score': 2 });
    expect(map(records[1]).mappedFields).toEqual({ label: 'b' });
  });
});

describe('fieldSelectionFor', () => {
  it('takes required fields and renames from the manifest, and choices from the installation config', () => {
    const selection = fieldSelectionFor(
      {
        requiredFields: [
          { fieldName: 'Id' },
          { fieldName: 'Email', mapToName: 'emailAddress' },
          { mapToName: 'industry' },
        ],
        optionalFields: [{ fieldName: 'LastName', mapToName: 'surname' }, { fieldName: 'Phone' }],
      },
      {
        selectedFields: { LastName: true },
        selectedFieldMappings: { industry: 'Industry__c' },
        selectedFieldsAuto: undefined,
      },
    );
    expect(selection).toEqual({
      requiredFields: ['Id', 'Email'],
      selectedFields: { LastName: true },
      selectedFieldMappings: { industry: 'Industry__c' },
      allFields: false,
      fieldMappings: { Email: 'emailAddress', LastName: 'surname' },
    });
    expect(selectAndMapFields(raw, selection)).toEqual({
      fields: { id: '003A' },
      mappedFields: { emailAddress: 'ada@example.com', surname: 'Lovelace', industry: 'Computing' },
      raw,
    });
  });
});
